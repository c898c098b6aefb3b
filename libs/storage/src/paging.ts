/**
 * The paging rule of every cursor-paged list (issue #29: every list is bounded), shared by the API
 * routes and the MCP tools: a default page, a maximum, and a keyset cursor.
 */

/** Items on a page when `limit` is not given, and the most a page holds. */
export const CURSOR_PAGE_DEFAULT = 1000;
export const CURSOR_PAGE_MAX = 5000;
const MAX_CURSOR_LENGTH = 1024;
const CONTROL = /\p{Cc}/u;

/** A cursor-paged list request, as parsePageQuery checked it. */
export interface PageQuery {
  limit: number;
  after?: string;
}

/** One page of a cursor-paged list: `next_cursor` (pass it as `after`) is set while `has_more`. */
export interface CursorPage<K> {
  page: K[];
  has_more: boolean;
  next_cursor?: string;
}

/** A bad `limit` or `after`: one line naming the field (API: 400; MCP: a tool error). */
export class PageQueryError extends Error {
  override readonly name = 'PageQueryError';

  constructor(
    readonly field: 'limit' | 'after',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Checks `limit` and `after` before any work: `limit` absent or empty → 1000, a positive integer
 * above 5000 → 5000, anything else (`0`, `-1`, `abc`, `1.5`) is refused; `after` absent or empty →
 * from the start, else it must be a key the list could hand out as `next_cursor` (`validCursor`).
 */
export function parsePageQuery(limit: string | number | undefined, after: string | undefined, validCursor: (cursor: string) => boolean): PageQuery {
  let n = CURSOR_PAGE_DEFAULT;
  if (limit !== undefined && limit !== '') {
    const text = String(limit);
    if ((typeof limit !== 'string' && typeof limit !== 'number') || !/^\d{1,16}$/.test(text) || Number(text) === 0) {
      throw new PageQueryError('limit', `invalid limit: must be a positive integer (at most ${CURSOR_PAGE_MAX} are returned)`);
    }
    n = Math.min(Number(text), CURSOR_PAGE_MAX);
  }
  if (after === undefined || after === '') return { limit: n };
  if (typeof after !== 'string' || after.length > MAX_CURSOR_LENGTH || CONTROL.test(after) || !validCursor(after)) {
    throw new PageQueryError('after', 'invalid after: pass the next_cursor of the previous page');
  }
  return { limit: n, after };
}

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
