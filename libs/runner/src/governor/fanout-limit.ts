import { join } from 'node:path';
import { type AppConfig, withFileLock } from '@app/storage';
import { abandonTurn, type RunSlot, takeTurn, type TurnState } from '../run-slots';
import { RunnerError } from '../runner.errors';
import { readTaskSettings, TaskSettings } from '../usage/task-settings';
import { appendTreeRun, childQueueBase, countTreeRuns, type TreeRef, treeOf, treeRunDirs } from './fanout-tree';

type FanoutKey = 'max_children_per_run' | 'max_runs_per_tree';

/** The smallest limit of config `defaults.<key>` and `<key>` of each task on the chain, with where it was set. */
function effectiveLimit(key: FanoutKey, config: AppConfig | undefined, taskDirs: string[]): { limit: number; source: string } | undefined {
  const configured = config?.defaults?.[key];
  let best = configured && configured > 0 ? { limit: configured, source: `config defaults.${key}` } : undefined;
  for (const dir of taskDirs) {
    const own = (readTaskSettings(dir) as TaskSettings)[key];
    if (own !== undefined && (!best || own < best.limit)) best = { limit: own, source: `${key} of task ${dir.split('/').pop()}` };
  }
  return best;
}

function refuseTreeTotal(root: string, tree: TreeRef, taskDirs: string[], config: AppConfig | undefined): void {
  const total = effectiveLimit('max_runs_per_tree', config, taskDirs);
  if (!total) return;
  const count = countTreeRuns(root, tree);
  if (count >= total.limit) {
    throw new RunnerError('FANOUT_LIMIT', `runs per task tree limit (${total.limit}) reached: the tree of run ${tree.topRunId} has ${count} runs (limit set by ${total.source})`);
  }
}

const chainTaskDirs = (taskDir: string, tree: TreeRef): string[] => [taskDir, ...tree.taskDirs.filter((d) => d !== taskDir)];

/**
 * A tree past its total is refused before anything is written (job-prepare.ts); checked again
 * under the tree's lock when the child is created (admitChild).
 */
export function checkTreeTotal(root: string, taskDir: string, parentRunId: string, opts: AdmitChildOptions): void {
  const tree = treeOf(root, parentRunId, [opts.parentTaskDir, taskDir]);
  refuseTreeTotal(root, tree, chainTaskDirs(taskDir, tree), opts.config);
}

/** The lock of a task tree's fan-out counting, in the task folder of the tree's top run. */
export const FANOUT_LOCK_FILE = 'FANOUT.lock';
const FANOUT_LOCK_TIMEOUT_MS = 30_000;

export interface AdmitChildOptions {
  config?: AppConfig;
  /** `--no-wait`: a child beyond max_children_per_run is refused instead of queued. */
  noWait?: boolean;
  /** The parent's task folder when known (JRUN_TASK_FOLDER): finds the parent's run without a scan. */
  parentTaskDir?: string;
}

/** A child that waits for one of its parent's max_children_per_run places (FIFO, across processes). */
export interface QueuedChild {
  reason: string;
  limit: number;
  queueBase: string;
  /** The name of its waiter marker in the queue (taken before the run had an id). */
  waiterId: string;
  state: TurnState;
}

export interface Admitted<T> {
  created: T;
  /** Its place among the parent's children (held until the run ends); absent when queued or unlimited. */
  slot?: RunSlot;
  queued?: QueuedChild;
}

/**
 * The fan-out governor (issue #33) beyond depth, under one flock on FANOUT.lock in the task folder
 * of the tree's top run, so two children started at the same instant cannot both pass a limit:
 * - `max_runs_per_tree`: a tree (the top run and all its descendants, finished or not) that holds
 *   that many runs gets no more: refused (FANOUT_LIMIT). Counted from the tree's ledger
 *   (fanout-tree.ts), not by scanning every run.
 * - `max_children_per_run`: a child takes one of the parent's places, a flock'd slot of the FIFO
 *   slot queue in `<root>/.conductor/fanout/<parent run>/` held for the child's whole run (the
 *   kernel frees it when the runner dies). With no free place the child is created as queued and
 *   waits (the caller finishes the wait outside the lock), or is refused under `noWait`.
 * Limits: config `defaults.<key>` and `<key>` of every task on the chain; the smallest wins.
 * `create` must make the new child count: allocate its run folder and write its run-info.
 */
export async function admitChild<T extends { runDir: string }>(
  root: string,
  taskDir: string,
  parentRunId: string,
  opts: AdmitChildOptions,
  create: (queuedReason?: string) => T,
): Promise<Admitted<T>> {
  const tree = treeOf(root, parentRunId, [opts.parentTaskDir, taskDir]);
  const taskDirs = chainTaskDirs(taskDir, tree);
  return withFileLock(join(tree.topTaskDir, FANOUT_LOCK_FILE), { timeoutMs: FANOUT_LOCK_TIMEOUT_MS }, async () => {
    // a ledger that is missing or was left open by a crash is recomputed before anything is appended
    if (tree.ledger) treeRunDirs(root, tree);
    refuseTreeTotal(root, tree, taskDirs, opts.config);
    const children = effectiveLimit('max_children_per_run', opts.config, taskDirs);
    let slot: RunSlot | undefined;
    let queued: QueuedChild | undefined;
    if (children) {
      const queueBase = childQueueBase(root, parentRunId);
      const state: TurnState = {};
      // the waiter's marker is named by a placeholder until the run has its id: the marker only
      // needs to be unique and flocked by this process
      const waiterId = `child-${process.pid}-${Date.now()}`;
      slot = await takeTurn({ root, limit: children.limit, runId: waiterId, queueBase }, state);
      if (!slot) {
        const reason = `children per run limit (${children.limit}) reached: run ${parentRunId} has ${children.limit} running children (limit set by ${children.source})`;
        if (opts.noWait) {
          abandonTurn(state);
          throw new RunnerError('FANOUT_LIMIT', `${reason}; not queued (--no-wait)`);
        }
        queued = { reason: `queued: ${reason}`, limit: children.limit, queueBase, waiterId, state };
      }
    }
    let created: T;
    try {
      if (tree.ledger) appendTreeRun(tree.ledger, root, 'open');
      created = create(queued?.reason);
      if (tree.ledger) appendTreeRun(tree.ledger, root, created);
    } catch (err) {
      if (tree.ledger) appendTreeRun(tree.ledger, root, 'aborted');
      slot?.release();
      if (queued) abandonTurn(queued.state);
      throw err;
    }
    return { created, slot, queued };
  });
}
