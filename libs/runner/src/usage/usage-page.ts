import { type CursorPage, cursorPage, parsePageQuery, type PageQuery } from '@app/storage';
import type { UsageRow } from '@app/contracts';
import { compareUsageKeys, type UsageReport } from './aggregate';

/** The row lists of a usage report, in the order they are paged: agents, then projects, then tasks. */
const LISTS = [
  ['agent', 'by_agent'],
  ['project', 'by_project'],
  ['task', 'by_task'],
] as const;
const RANK = new Map<string, number>(LISTS.map(([kind], i) => [kind, i]));
const CURSOR = /^(agent|project|task):(.+)$/s;

function compareCursors(a: string, b: string): number {
  const ka = a.slice(0, a.indexOf(':'));
  const kb = b.slice(0, b.indexOf(':'));
  return RANK.get(ka)! - RANK.get(kb)! || compareUsageKeys(a.slice(ka.length + 1), b.slice(kb.length + 1));
}

/** A cursor of a usage report's rows: `<agent|project|task>:<row key>`. */
export const isUsageCursor = (c: string): boolean => CURSOR.test(c);

/** `limit` / `after` of a usage report (the shared paging rule). */
export function usagePageQuery(limit: string | number | undefined, after: string | undefined): PageQuery {
  return parsePageQuery(limit, after, isUsageCursor);
}

/** A usage report cut to one page of rows, with the paging fields. */
export type UsagePage = UsageReport & Omit<CursorPage<never>, 'page'>;

/**
 * One page of a usage report (issue #29): the totals (`runs`, `usage`, `total_tokens`, `tree`)
 * always cover every selected run; the rows of `by_agent`, `by_project` and `by_task` are paged as
 * one list (agents, then projects, then tasks, each by key), at most `limit` rows in all, with
 * `next_cursor` → `after` while `has_more`.
 */
export function usagePage(report: UsageReport, q: PageQuery): UsagePage {
  const rows = LISTS.flatMap(([kind, list]) => report[list].map((row) => ({ kind, row, key: `${kind}:${row.key}` })));
  const { page, ...more } = cursorPage(rows, (r) => r.key, q, compareCursors);
  const pick = (kind: string): UsageRow[] => page.filter((r) => r.kind === kind).map((r) => r.row);
  return { ...report, by_agent: pick('agent'), by_project: pick('project'), by_task: pick('task'), ...more };
}
