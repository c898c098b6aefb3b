import type { StorageIndex } from '@app/storage';
import { buildRunRow, type RunRow } from './list-rows';

/**
 * The task/run tree of `list --tree` and `status --tree` (issue #30 defect 13): a run hangs beneath
 * the run that started it (run-info parent_run_id), whichever task of the project either is in.
 */

/** One run of the tree: its `list --task` row, its task, and the runs it started. */
export interface RunNode extends RunRow {
  task_id: string;
  children: RunNode[];
}

const byRunId = (a: RunNode, b: RunNode): number => (a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : 0);

/** True when following parent links up from `from` reaches `target` (linking would close a cycle). */
function reaches(from: RunNode, target: RunNode, byId: Map<string, RunNode>): boolean {
  const seen = new Set<string>();
  for (let cur: RunNode | undefined = from; cur; cur = cur.parent_run_id ? byId.get(cur.parent_run_id) : undefined) {
    if (cur === target) return true;
    if (seen.has(cur.run_id)) return false;
    seen.add(cur.run_id);
  }
  return false;
}

/**
 * The runs of a project as trees, keyed by task (every task of the project, in listing order):
 * each task's root runs in run order, with their descendants beneath them. A run whose parent is
 * not in the project (or whose parent links form a cycle) is a root of its own task and keeps its
 * parent_run_id, so nothing is left out and nothing is shown twice.
 */
export function buildRunForest(index: StorageIndex, project: string): Map<string, RunNode[]> {
  const roots = new Map<string, RunNode[]>();
  const nodes: RunNode[] = [];
  const byId = new Map<string, RunNode>();
  for (const task of index.listTasks(project)) {
    roots.set(task, []);
    for (const runId of index.listRuns(project, task)) {
      const { run_id, ...row } = buildRunRow(index, project, task, runId);
      const node: RunNode = { run_id, task_id: task, ...row, children: [] };
      nodes.push(node);
      byId.set(runId, node);
    }
  }
  for (const node of nodes) {
    const parent = node.parent_run_id ? byId.get(node.parent_run_id) : undefined;
    if (parent && !reaches(parent, node, byId)) parent.children.push(node);
    else roots.get(node.task_id)!.push(node);
  }
  for (const node of nodes) node.children.sort(byRunId);
  return roots;
}

/** The latest root run of a task with its tree (what `status --tree` shows), or none. */
export function latestRunTree(forest: Map<string, RunNode[]>, task: string): RunNode[] {
  const latest = forest.get(task)?.at(-1);
  return latest ? [latest] : [];
}

