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

/** Default and maximum page of the cursor-paged lists (`GET /api/v1/runs`, `GET /api/v1/tasks`). */
export const CURSOR_PAGE_DEFAULT = 1000;
export const CURSOR_PAGE_MAX = 5000;

/**
 * One page of `keys` (already in list order, unique) after the key `after` (exclusive; from the
 * start when absent or no longer listed past it): `limit` default 1000, capped at 5000
 * (non-numeric or ≤ 0 → the default). `next_cursor` (the page's last key) is set while `has_more`.
 */
export function cursorPage<K>(keys: K[], keyOf: (k: K) => string, after: string | undefined, limitText: string | undefined): { page: K[]; has_more: boolean; next_cursor?: string } {
  let limit = Number.parseInt(limitText ?? '', 10);
  if (!Number.isFinite(limit) || limit <= 0) limit = CURSOR_PAGE_DEFAULT;
  limit = Math.min(limit, CURSOR_PAGE_MAX);
  const cursor = after?.trim();
  const start = cursor ? keys.findIndex((k) => keyOf(k) > cursor) : 0;
  const from = start < 0 ? keys.length : start;
  const page = keys.slice(from, from + limit);
  const hasMore = from + limit < keys.length;
  return hasMore ? { page, has_more: true, next_cursor: keyOf(page[page.length - 1]) } : { page, has_more: false };
}
