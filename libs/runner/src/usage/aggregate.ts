import type { CursorPaged, UsageReport as WireUsageReport, UsageRow, UsageTotals } from '@app/contracts';
import type { RunInfo, RunsLayout } from '@app/storage';
import { allRuns, descendantRuns, ScannedRun, taskRuns } from '../run-scan';
import { sumEgressBytes } from './egress-bytes';

export const ZERO_USAGE: UsageTotals = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 };

/** Tokens counted against `max_tokens`: input + output (cache reads and writes are reported, not counted). */
export function totalTokens(u: UsageTotals): number {
  return u.input_tokens + u.output_tokens;
}

export function addUsage(a: UsageTotals, b: UsageTotals | undefined): UsageTotals {
  if (!b) return a;
  const out: UsageTotals = {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cache_read_tokens: a.cache_read_tokens + b.cache_read_tokens,
    cache_write_tokens: a.cache_write_tokens + b.cache_write_tokens,
  };
  if (a.cost_usd !== undefined || b.cost_usd !== undefined) out.cost_usd = round6((a.cost_usd ?? 0) + (b.cost_usd ?? 0));
  return out;
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

export function sumUsage(infos: Iterable<RunInfo>): UsageTotals {
  let total = { ...ZERO_USAGE };
  for (const i of infos) total = addUsage(total, i.usage);
  return total;
}

/** A task's runs plus every run whose parent chain leads to one of them (its sub-tree). */
export function taskTreeRuns(layout: RunsLayout, projectId: string, taskId: string, all?: ScannedRun[]): ScannedRun[] {
  const own = taskRuns(layout.taskDir(projectId, taskId));
  const runs = all ?? allRuns(layout.root);
  const seen = new Set(own.map((r) => r.info.run_id));
  const out = [...own];
  for (const r of own) {
    for (const d of descendantRuns(runs, r.info.run_id)) {
      if (seen.has(d.info.run_id)) continue;
      seen.add(d.info.run_id);
      out.push(d);
    }
  }
  return out;
}

/** The report without its page fields (the API pages its rows). */
export type UsageReport = Omit<WireUsageReport, keyof CursorPaged>;

export interface UsageQuery {
  /** The runs root's layout (of the composition root). */
  layout: RunsLayout;
  projectId?: string;
  taskId?: string;
  /** Only runs that started at or after this time. */
  since?: Date;
}

/** The order of usage rows: by key, locale-aware, ties (keys equal to the locale) by code units. */
export function compareUsageKeys(a: string, b: string): number {
  return a.localeCompare(b) || (a < b ? -1 : a > b ? 1 : 0);
}

function rows(runs: ScannedRun[], keyOf: (i: RunInfo) => string): UsageRow[] {
  const map = new Map<string, { runs: number; usage: UsageTotals }>();
  for (const r of runs) {
    const k = keyOf(r.info);
    const row = map.get(k) ?? { runs: 0, usage: { ...ZERO_USAGE } };
    row.runs++;
    row.usage = addUsage(row.usage, r.info.usage);
    map.set(k, row);
  }
  return [...map.entries()]
    .sort(([a], [b]) => compareUsageKeys(a, b))
    .map(([key, row]) => ({ key, runs: row.runs, usage: row.usage, total_tokens: totalTokens(row.usage) }));
}

/** Usage per run summed per project, task (own runs and sub-tree) and agent: the one aggregation every surface uses. */
export function usageReport(q: UsageQuery): UsageReport {
  const everything = allRuns(q.layout.root);
  const since = q.since?.getTime();
  const inTime = (r: ScannedRun): boolean => since === undefined || r.info.start_time.getTime() >= since;
  let selected = everything.filter((r) => (!q.projectId || r.info.project_id === q.projectId) && (!q.taskId || r.info.task_id === q.taskId) && inTime(r));
  const usage = sumUsage(selected.map((r) => r.info));
  const report: UsageReport = {
    runs: selected.length,
    usage,
    total_tokens: totalTokens(usage),
    by_agent: [],
    by_task: [],
    by_project: [],
  };
  if (q.projectId) report.project_id = q.projectId;
  if (q.since) report.since = q.since.toISOString();
  if (q.taskId && q.projectId) {
    report.task_id = q.taskId;
    const tree = taskTreeRuns(q.layout, q.projectId, q.taskId, everything).filter(inTime);
    const treeUsage = sumUsage(tree.map((r) => r.info));
    report.tree = { runs: tree.length, usage: treeUsage, total_tokens: totalTokens(treeUsage) };
    selected = tree;
  }
  report.by_agent = rows(selected, (i) => i.agent || 'unknown');
  report.by_task = rows(selected, (i) => `${i.project_id}/${i.task_id}`);
  report.by_project = rows(selected, (i) => i.project_id);
  const egress = sumEgressBytes(selected.map((r) => r.dir));
  if (egress) report.egress_bytes = egress;
  return report;
}
