import { runActivity, RunRecord } from './shapes';

export interface FlatRunQuery {
  activeOnly: boolean;
  selectedTask?: string;
  limit: number;
}

const isActive = (r: RunRecord) => r.info.status === 'running' || (r.info.status as string) === 'queued';
const byActivityDesc = (a: RunRecord, b: RunRecord) => runActivity(b.info) - runActivity(a.info) || (a.runId < b.runId ? 1 : -1);

/**
 * The tree-view selection of #27 (api.md §1.3): seeds (the selected task's latest runs, active runs,
 * or for an idle project the latest run of every task), then their ancestry along parent/previous
 * chains, then descendants by parent_run_id. Input and output are ordered by start time.
 */
export function selectFlatRuns(runs: RunRecord[], q: FlatRunQuery): RunRecord[] {
  if (!q.selectedTask && !q.activeOnly) return runs;
  const byId = new Map(runs.map((r) => [r.runId, r]));
  const seeds = new Set<string>();
  if (q.selectedTask) {
    const own = runs.filter((r) => r.taskId === q.selectedTask).sort(byActivityDesc);
    (q.limit > 0 ? own.slice(0, q.limit) : own).forEach((r) => seeds.add(r.runId));
  }
  if (q.activeOnly) runs.filter(isActive).forEach((r) => seeds.add(r.runId));
  let idle = false;
  if (q.activeOnly && !q.selectedTask && seeds.size === 0) {
    idle = true;
    const latest = new Map<string, RunRecord>();
    for (const r of runs) {
      const cur = latest.get(r.taskId);
      if (!cur || byActivityDesc(r, cur) < 0) latest.set(r.taskId, r);
    }
    latest.forEach((r) => seeds.add(r.runId));
  }
  // cross-task anchors: for each included task, the latest run whose parent lives in another task
  const anchorFor = (taskId: string) =>
    runs
      .filter((r) => r.taskId === taskId && r.info.parent_run_id && byId.get(r.info.parent_run_id)?.taskId !== taskId)
      .sort(byActivityDesc)[0];
  for (const id of [...seeds]) {
    const anchor = anchorFor(byId.get(id)!.taskId);
    if (anchor) seeds.add(anchor.runId);
  }
  const included = new Set(seeds);
  const queue = [...seeds];
  while (queue.length) {
    const r = byId.get(queue.pop()!);
    for (const up of [r?.info.parent_run_id, r?.info.previous_run_id]) {
      if (up && byId.has(up) && !included.has(up)) {
        included.add(up);
        queue.push(up);
      }
    }
  }
  const children = new Map<string, RunRecord[]>();
  for (const r of runs) {
    const parent = r.info.parent_run_id;
    if (parent) children.set(parent, [...(children.get(parent) ?? []), r]);
  }
  const frontier = [...included];
  while (frontier.length) {
    const id = frontier.shift()!;
    for (const child of children.get(id) ?? []) {
      if (included.has(child.runId)) continue;
      if (idle && child.taskId === byId.get(id)?.taskId && !children.has(child.runId)) continue;
      included.add(child.runId);
      frontier.push(child.runId);
    }
  }
  return runs.filter((r) => included.has(r.runId));
}
