import type { Paginated } from '@app/contracts';
import { badRequest } from '../common/api-error';

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

/** Default and maximum page of the cursor-paged lists (issue #29: every list route is bounded). */
export const CURSOR_PAGE_DEFAULT = 1000;
export const CURSOR_PAGE_MAX = 5000;
const MAX_CURSOR_LENGTH = 1024;

/** A cursor-paged list request, read at the door by pageQuery. */
export interface PageQuery {
  limit: number;
  after?: string;
}

/** One page of a cursor-paged list: `next_cursor` (pass it as `after=`) is set while `has_more`. */
export interface CursorPage<K> {
  page: K[];
  has_more: boolean;
  next_cursor?: string;
}

/**
 * The paging rule of every cursor-paged list, checked before any work: `limit` absent or empty →
 * 1000, a positive integer above 5000 → 5000, anything else (`0`, `-1`, `abc`, `1.5`) → 400;
 * `after` absent or empty → from the start, else it must be a key the list could hand out as
 * `next_cursor` (`validCursor`), or 400. One line each.
 */
export function pageQuery(limitText: string | undefined, afterText: string | undefined, validCursor: (cursor: string) => boolean): PageQuery {
  let limit = CURSOR_PAGE_DEFAULT;
  if (limitText !== undefined && limitText !== '') {
    if (typeof limitText !== 'string' || !/^\d{1,16}$/.test(limitText) || Number(limitText) === 0) {
      throw badRequest(`invalid limit: must be a positive integer (at most ${CURSOR_PAGE_MAX} are returned)`, { limit: 'must be a positive integer' });
    }
    limit = Math.min(Number(limitText), CURSOR_PAGE_MAX);
  }
  if (afterText === undefined || afterText === '') return { limit };
  if (typeof afterText !== 'string' || afterText.length > MAX_CURSOR_LENGTH || CONTROL.test(afterText) || !validCursor(afterText)) {
    throw badRequest('invalid after: pass the next_cursor of the previous page', { after: 'not a cursor of this list' });
  }
  return { limit, after: afterText };
}

const CONTROL = /\p{Cc}/u;

/** Code-unit order, the order of the list keys unless a list says otherwise. */
export const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * One page of `keys` (already in list order by `compare` on `keyOf`, unique) after the key `after`
 * (exclusive; a keyset cursor, so an item added or removed elsewhere in the list neither hides nor
 * repeats the others). `next_cursor` (the page's last key) is set while `has_more`.
 */
export function cursorPage<K>(keys: K[], keyOf: (k: K) => string, q: PageQuery, compare: (a: string, b: string) => number = byCodeUnits): CursorPage<K> {
  const start = q.after !== undefined ? keys.findIndex((k) => compare(keyOf(k), q.after!) > 0) : 0;
  const from = start < 0 ? keys.length : start;
  const page = keys.slice(from, from + q.limit);
  const hasMore = from + q.limit < keys.length;
  return hasMore ? { page, has_more: true, next_cursor: keyOf(page[page.length - 1]) } : { page, has_more: false };
}

const TIME_DIGITS = 15;
const TIME_MAX = 10 ** TIME_DIGITS - 1;

/**
 * The list key of an item ordered by a time, then by id: `<15-digit ms>~<id>` sorts in code-unit
 * order as (time, id) does; `newestFirst` inverts the time (newest first, ties by id ascending).
 */
export function timeKey(ms: number, id: string, newestFirst = false): string {
  const t = Math.min(TIME_MAX, Math.max(0, Math.floor(Number.isFinite(ms) ? ms : 0)));
  return `${String(newestFirst ? TIME_MAX - t : t).padStart(TIME_DIGITS, '0')}~${id}`;
}

/** True for a timeKey whose id passes `validId`. */
export function isTimeKey(cursor: string, validId: (id: string) => boolean): boolean {
  const m = /^(\d{15})~(.+)$/s.exec(cursor);
  return m !== null && validId(m[2]);
}
