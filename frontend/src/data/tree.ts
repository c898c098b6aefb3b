import type { FlatRun, TaskListItem } from '../api/types';
import { compareRuns, deriveTaskStatus, normalizeStatus, parseTimeOrZero, type DisplayStatus } from './status';

export type RunRelation = 'first' | 'restart' | 'child';

export interface RunNode {
  run: FlatRun;
  /** How the run relates to the node it sits under. */
  relation: RunRelation;
  /** 1-based attempt number within its restart chain. */
  attempt: number;
  children: RunNode[];
}

export interface TaskNode {
  id: string;
  status: DisplayStatus;
  runs: FlatRun[];
  roots: RunNode[];
  childTasks: TaskNode[];
  /** Task whose run started this task's first run (cross-task parent_run_id). */
  parentTaskId?: string;
  createdAt: number;
  lastActivity: number;
  done: boolean;
}

/**
 * Builds the project tree from the flat run list (GET /api/projects/{p}/runs/flat) and, optionally,
 * the task list (tasks without runs and DONE flags). Within a task, restarts (previous_run_id) are
 * nested one level under the first attempt of their chain and child runs (parent_run_id) under their
 * parent run; a task whose first run was started by a run of another task is nested under that task.
 * Ordering is stable: newest task first by creation time (then id), runs chronologically.
 */
export function buildTaskTree(runs: readonly FlatRun[], tasks: readonly TaskListItem[] = []): TaskNode[] {
  const byTask = new Map<string, FlatRun[]>();
  const runById = new Map<string, FlatRun>();
  for (const run of runs) {
    runById.set(run.id, run);
    let list = byTask.get(run.task_id);
    if (!list) byTask.set(run.task_id, (list = []));
    list.push(run);
  }
  const taskInfo = new Map(tasks.map((t) => [t.id, t]));
  for (const t of tasks) if (!byTask.has(t.id)) byTask.set(t.id, []);

  const nodes = new Map<string, TaskNode>();
  for (const [taskId, list] of byTask) {
    list.sort(compareRuns);
    const info = taskInfo.get(taskId);
    const done = info?.done ?? false;
    // needs_input (#17) comes from the task bus, not from the runs: the server's task status wins
    const status = info?.status === 'needs_input' ? 'needs_input' : normalizeStatus(info?.status) === 'held' ? 'held' : list.length > 0 ? deriveTaskStatus(list, done) : normalizeStatus(info?.status);
    let lastActivity = 0;
    for (const r of list) lastActivity = Math.max(lastActivity, parseTimeOrZero(r.end_time), parseTimeOrZero(r.start_time));
    nodes.set(taskId, {
      id: taskId,
      status,
      runs: list,
      roots: buildRunNodes(list),
      childTasks: [],
      createdAt: list.length > 0 ? parseTimeOrZero(list[0].start_time) : Number.MAX_SAFE_INTEGER,
      lastActivity: lastActivity || parseTimeOrZero(info?.last_activity),
      done,
    });
  }

  const topLevel: TaskNode[] = [];
  for (const node of nodes.values()) {
    const parentRunId = node.runs[0]?.parent_run_id;
    const parentTaskId = parentRunId ? runById.get(parentRunId)?.task_id : undefined;
    if (parentTaskId && parentTaskId !== node.id && !createsTaskCycle(node.id, parentTaskId, nodes, runById)) {
      node.parentTaskId = parentTaskId;
      nodes.get(parentTaskId)!.childTasks.push(node);
    } else {
      topLevel.push(node);
    }
  }
  const sortTasks = (list: TaskNode[]) => {
    list.sort(compareTasks);
    for (const t of list) sortTasks(t.childTasks);
  };
  sortTasks(topLevel);
  return topLevel;
}

function compareTasks(a: TaskNode, b: TaskNode): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** True when nesting `taskId` under `parentTaskId` would make a loop of tasks. */
function createsTaskCycle(
  taskId: string,
  parentTaskId: string,
  nodes: Map<string, TaskNode>,
  runById: Map<string, FlatRun>,
): boolean {
  const seen = new Set<string>([taskId]);
  let current: string | undefined = parentTaskId;
  while (current) {
    if (seen.has(current)) return true;
    seen.add(current);
    const first: FlatRun | undefined = nodes.get(current)?.runs[0];
    const up: string | undefined = first?.parent_run_id ? runById.get(first.parent_run_id)?.task_id : undefined;
    current = up && up !== current ? up : undefined;
  }
  return false;
}

/** Nests one task's runs (already in chronological order). */
export function buildRunNodes(runs: readonly FlatRun[]): RunNode[] {
  const ids = new Set(runs.map((r) => r.id));
  const byId = new Map(runs.map((r) => [r.id, r]));
  const nodeById = new Map<string, RunNode>();
  const chainHead = (run: FlatRun): { head: FlatRun; attempt: number } => {
    let head = run;
    let attempt = 1;
    const seen = new Set<string>([run.id]);
    while (head.previous_run_id && ids.has(head.previous_run_id) && !seen.has(head.previous_run_id)) {
      head = byId.get(head.previous_run_id)!;
      seen.add(head.id);
      attempt++;
    }
    return { head, attempt };
  };
  for (const run of runs) {
    const { head, attempt } = chainHead(run);
    const relation: RunRelation = head.id !== run.id ? 'restart' : run.parent_run_id && ids.has(run.parent_run_id) ? 'child' : 'first';
    nodeById.set(run.id, { run, relation, attempt, children: [] });
  }
  const roots: RunNode[] = [];
  for (const run of runs) {
    const node = nodeById.get(run.id)!;
    let parent: RunNode | undefined;
    if (node.relation === 'restart') parent = nodeById.get(chainHead(run).head.id);
    else if (node.relation === 'child') parent = nodeById.get(run.parent_run_id!);
    if (parent && !isDescendant(parent, node)) parent.children.push(node);
    else roots.push(node);
  }
  return roots;
}

function isDescendant(candidate: RunNode, ancestor: RunNode): boolean {
  const stack = [...ancestor.children];
  while (stack.length) {
    const n = stack.pop()!;
    if (n === candidate) return true;
    stack.push(...n.children);
  }
  return false;
}

export interface TreeFilter {
  text: string;
  status: DisplayStatus | 'all';
}

export interface TreeRow {
  key: string;
  depth: number;
  kind: 'task' | 'run';
  task: TaskNode;
  run?: RunNode;
  hasChildren: boolean;
  expanded: boolean;
}

/** Expansion choices made by the user; anything absent uses the default (only the selected task open). */
export type ExpansionState = ReadonlyMap<string, boolean>;

export function taskKey(taskId: string): string {
  return `t:${taskId}`;
}
export function runKey(runId: string): string {
  return `r:${runId}`;
}

function taskMatches(task: TaskNode, filter: TreeFilter): boolean {
  const text = filter.text.trim().toLowerCase();
  const textOk =
    !text ||
    task.id.toLowerCase().includes(text) ||
    task.runs.some((r) => r.id.toLowerCase().includes(text) || r.agent.toLowerCase().includes(text));
  if (!textOk) return false;
  if (filter.status === 'all') return true;
  return task.status === filter.status || task.runs.some((r) => normalizeStatus(r.status) === filter.status);
}

/**
 * Turns the tree into the visible rows (for the windowed list): filtered tasks, expanded as the
 * user chose. A parent task stays visible when one of its child tasks matches.
 */
export function flattenTree(
  tasks: readonly TaskNode[],
  expansion: ExpansionState,
  filter: TreeFilter,
  selectedTaskId?: string,
): TreeRow[] {
  const rows: TreeRow[] = [];
  const filtering = filter.text.trim() !== '' || filter.status !== 'all';
  const visible = (t: TaskNode): boolean => taskMatches(t, filter) || t.childTasks.some(visible);

  const pushRuns = (task: TaskNode, nodes: RunNode[], depth: number) => {
    for (const node of nodes) {
      const key = runKey(node.run.id);
      const expanded = expansion.get(key) ?? true;
      rows.push({ key, depth, kind: 'run', task, run: node, hasChildren: node.children.length > 0, expanded });
      if (expanded) pushRuns(task, node.children, depth + 1);
    }
  };
  const pushTasks = (list: readonly TaskNode[], depth: number) => {
    for (const task of list) {
      if (filtering && !visible(task)) continue;
      const key = taskKey(task.id);
      const defaultOpen = task.id === selectedTaskId || (filtering && !taskMatches(task, filter));
      const expanded = expansion.get(key) ?? defaultOpen;
      const hasChildren = task.roots.length > 0 || task.childTasks.length > 0;
      rows.push({ key, depth, kind: 'task', task, hasChildren, expanded });
      if (expanded) {
        pushRuns(task, task.roots, depth + 1);
        pushTasks(task.childTasks, depth + 1);
      }
    }
  };
  pushTasks(tasks, 0);
  return rows;
}

/** Finds a task anywhere in the tree. */
export function findTask(tasks: readonly TaskNode[], id: string): TaskNode | undefined {
  for (const t of tasks) {
    if (t.id === id) return t;
    const found = findTask(t.childTasks, id);
    if (found) return found;
  }
  return undefined;
}

/** Number of tasks in the tree, nested ones included (what the project row and the cards show). */
export function countTasks(tasks: readonly TaskNode[]): number {
  let n = 0;
  for (const t of tasks) n += 1 + countTasks(t.childTasks);
  return n;
}

/**
 * The run the detail view shows: the one named (an earlier attempt of a restart chain shows its
 * own output), else the task's latest run.
 */
export function pickRun(task: TaskNode | undefined, runId: string | undefined): FlatRun | undefined {
  if (!task) return undefined;
  if (runId) {
    const named = task.runs.find((r) => r.id === runId);
    if (named) return named;
  }
  return [...task.runs].sort(compareRuns).at(-1);
}
