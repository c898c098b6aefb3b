import { LivenessProbe, RunInfo, runInfoFile, updateRunInfo } from '@app/storage';
import { formatGoDuration } from './go-duration';
import { errorText } from './runner.errors';
import { pendingChildPids } from './pending-child';
import { runnerHolds } from './run-holder';
import { isUnfinished, taskRuns } from './run-scan';
import { rmSync } from 'node:fs';
import { sleep } from './sleep';

export interface ChildWaitOptions {
  taskDir: string;
  timeoutMs: number;
  pollMs: number;
  probe: LivenessProbe;
  signal?: AbortSignal;
  /** A stop of the task while its children finish: the task ends stopped, not completed. */
  stopReason?(): string | undefined;
  post(type: string, body: string): Promise<void>;
}

export type ChildWaitOutcome = 'completed' | 'aborted' | { stopped: string };

interface Child {
  id: string;
  dir: string;
  pgid: number;
}

/** A dead child whose run-info still says running is marked failed (§1.4 healing). */
async function heal(dir: string): Promise<void> {
  await updateRunInfo(runInfoFile(dir), (i: RunInfo) => {
    if (!isUnfinished(i)) return i;
    i.end_time = new Date();
    if (i.exit_code === 0) i.exit_code = -1;
    i.status = 'failed';
    return i;
  }).catch(() => undefined);
}

function isAlive(probe: LivenessProbe, pgid: number): boolean {
  try {
    return pgid < 0 ? probe.isPidAlive(-pgid) : probe.isGroupAlive(pgid);
  } catch {
    return true;
  }
}

/**
 * A child lives while its agent group (or, still starting, its pending pid) does, or while its
 * runner holds the run (RUNNER.lock): between the agent's exit and the runner recording the end,
 * the group is gone but the record is about to say `completed`, so it must not be healed to failed.
 */
function childAlive(probe: LivenessProbe, c: Child): boolean {
  return isAlive(probe, c.pgid) || (!!c.dir && runnerHolds(c.dir));
}

/**
 * Unfinished runs of the task with a parent (root runs are never children) and a live group, plus
 * children still starting (a pending marker in a run folder whose process lives; issue #11).
 */
export async function findActiveChildren(taskDir: string, probe: LivenessProbe): Promise<Child[]> {
  const active: Child[] = [];
  const runs = taskRuns(taskDir);
  for (const p of pendingChildPids(runs.map((r) => r.dir))) {
    if (probe.isPidAlive(p.pid)) active.push({ id: `pending:${p.pid}`, dir: '', pgid: -p.pid });
    else rmSync(p.path, { force: true }); // died before creating its run: never waited for
  }
  for (const r of runs) {
    if (!isUnfinished(r.info) || !r.info.parent_run_id) continue;
    const pgid = r.info.pgid > 0 ? r.info.pgid : r.info.pid;
    const child = { id: r.info.run_id, dir: r.dir, pgid };
    if ((pgid > 0 && isAlive(probe, pgid)) || runnerHolds(r.dir)) active.push(child);
    else await heal(r.dir);
  }
  return active;
}

/** How long DONE handling looks for children still starting while the root agent's group lives on. */
export const PENDING_SETTLE_MS = 2000;

/** The latest root run's agent group (pgid = pid) still has processes, e.g. a backgrounded `run-agent job`. */
function rootGroupAlive(taskDir: string, probe: LivenessProbe): boolean {
  const root = taskRuns(taskDir).filter((r) => !r.info.parent_run_id).at(-1)?.info;
  return !!root && root.pgid > 1 && root.pgid === root.pid && isAlive(probe, root.pgid);
}

/**
 * Children of the task; when there are none yet but the root agent's group lives on, a child may
 * have been started in the background an instant before DONE: look again until it registers
 * (its pending marker), the group empties, or PENDING_SETTLE_MS passes.
 */
async function childrenAfterSettling(opts: ChildWaitOptions): Promise<Child[]> {
  let children = await findActiveChildren(opts.taskDir, opts.probe);
  const deadline = Date.now() + PENDING_SETTLE_MS;
  while (children.length === 0 && Date.now() < deadline && rootGroupAlive(opts.taskDir, opts.probe)) {
    if (!(await sleep(20, opts.signal))) break;
    children = await findActiveChildren(opts.taskDir, opts.probe);
  }
  return children;
}

/** handleDone (runner-agents.md §1.4): wait for live child runs, bounded by the timeout. */
export async function waitForChildren(opts: ChildWaitOptions): Promise<ChildWaitOutcome> {
  let children: Child[];
  try {
    children = await childrenAfterSettling(opts);
  } catch (err) {
    await opts.post('WARNING', `failed to enumerate children: ${errorText(err)}`);
    children = [];
  }
  if (children.length === 0) {
    await opts.post('INFO', 'task completed (DONE marker present, no active children)');
    return 'completed';
  }
  const ids = (list: Child[]): string => `[${list.map((c) => c.id).filter(Boolean).join(' ')}]`;
  await opts.post('INFO', `waiting for ${children.length} children to complete: ${ids(children)}`);
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const remaining: Child[] = [];
    for (const c of children) {
      if (childAlive(opts.probe, c)) remaining.push(c);
      else if (c.dir) await heal(c.dir);
    }
    // a pending child becomes a run; children may start children: rescan, keep the known ones
    const known = new Set(remaining.map((c) => c.id));
    for (const c of await findActiveChildren(opts.taskDir, opts.probe).catch(() => [] as Child[])) {
      if (!known.has(c.id)) remaining.push(c);
    }
    children = remaining.filter((c) => !(c.id.startsWith('pending:') && !isAlive(opts.probe, c.pgid)));
    const stop = opts.stopReason?.();
    if (stop) return { stopped: stop };
    if (children.length === 0) {
      await opts.post('INFO', 'task completed (all children finished)');
      return 'completed';
    }
    if (Date.now() > deadline) {
      await opts.post('WARNING', `timeout waiting for children after ${formatGoDuration(opts.timeoutMs)}: ${ids(children)}`);
      return 'completed';
    }
    if (!(await sleep(Math.min(opts.pollMs, Math.max(1, deadline - Date.now() + 1)), opts.signal))) {
      await opts.post('ERROR', 'failed waiting for children: context canceled');
      return 'aborted';
    }
  }
}
