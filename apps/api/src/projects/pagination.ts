import type { Paginated } from '@app/contracts';

/** Page bounds (api.md §8.2): limit default 50, clamped to 500; offset default 0. */
export function pageBounds(limitText?: string, offsetText?: string): { limit: number; offset: number } {
  let limit = Number.parseInt(limitText ?? '', 10);
  if (!Number.isFinite(limit) || limit <= 0) limit = 50;
  limit = Math.min(limit, 500);
  let offset = Number.parseInt(offsetText ?? '', 10);
  if (!Number.isFinite(offset) || offset < 0) offset = 0;
  return { limit, offset };
}

/** Pagination envelope (api.md §8.2). */
export function paginate<T>(items: T[], limitText?: string, offsetText?: string): Paginated<T> {
  return paginateMapped(items, limitText, offsetText, (x) => x);
}

/** The envelope over `keys`, with `toItem` called only for the keys on the page (work ∝ page size). */
export function paginateMapped<K, T>(keys: K[], limitText: string | undefined, offsetText: string | undefined, toItem: (key: K) => T): Paginated<T> {
  const { limit, offset } = pageBounds(limitText, offsetText);
  return { items: keys.slice(offset, offset + limit).map(toItem), total: keys.length, limit, offset, has_more: offset + limit < keys.length };
}
