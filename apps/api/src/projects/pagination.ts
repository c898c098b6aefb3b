import type { Paginated } from '@app/contracts';

/** Pagination envelope (api.md §8.2): limit default 50, clamped to 500; offset default 0. */
export function paginate<T>(items: T[], limitText?: string, offsetText?: string): Paginated<T> {
  let limit = Number.parseInt(limitText ?? '', 10);
  if (!Number.isFinite(limit) || limit <= 0) limit = 50;
  limit = Math.min(limit, 500);
  let offset = Number.parseInt(offsetText ?? '', 10);
  if (!Number.isFinite(offset) || offset < 0) offset = 0;
  return { items: items.slice(offset, offset + limit), total: items.length, limit, offset, has_more: offset + limit < items.length };
}
