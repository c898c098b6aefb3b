import { join } from 'node:path';
import { createLivenessProbe, isStaleEpoch, isTaskDone, flockHeldByOther, LivenessProbe, type OwnerFence, runInfoFile, updateRunInfo } from '@app/storage';
import { RunnerError } from './runner.errors';
import { isUnfinished, taskRuns } from './run-scan';
import { sleep } from './sleep';
import { TASK_LOCK_FILE } from './task-lock';

/** A root run of the task whose runner is gone but whose agent still runs. */
export interface LiveRootRun {
  runId: string;
  dir: string;
  pid: number;
  pgid: number;
}

const ADOPT_POLL_MS = 200;

/** Zombies count as exited, by the one rule in @app/storage's liveness (the probe applies it). */
function agentAlive(pid: number, pgid: number, probe: LivenessProbe): boolean {
  if (!(pgid > 1 && pgid === pid)) return probe.isPidAlive(pid);
  return probe.isGroupAlive(pgid);
}

/**
 * The latest unfinished root run whose agent is alive. Agent records are session leaders
 * (pgid = pid): their group is probed. A runner's sentinel or a REST run (pid = the runner) counts
 * only while that process lives (its group may be a shell's or a test runner's).
 */
export function findLiveRootRun(taskDir: string, probe: LivenessProbe = createLivenessProbe()): LiveRootRun | undefined {
  const runs = taskRuns(taskDir).filter((r) => !r.info.parent_run_id && isUnfinished(r.info));
  for (const r of runs.reverse()) {
    const { pid, pgid } = r.info;
    if (pid === process.pid) continue;
    if (agentAlive(pid, pgid, probe)) return { runId: r.info.run_id, dir: r.dir, pid, pgid };
  }
  return undefined;
}

export function liveRunMessage(projectId: string, taskId: string, live: LiveRootRun): string {
  return (
    `task ${taskId} still has a live agent from a runner that is gone: run ${live.runId}, pid ${live.pid}; ` +
    `pass --adopt to wait for it and continue the loop, or stop it with \`run-agent stop --project ${projectId} --task ${taskId}\``
  );
}

/** Every loop or root-job start: a live agent of an earlier runner is refused (never two agents). */
export function refuseLiveRootRun(taskDir: string, projectId: string, taskId: string, probe?: LivenessProbe): void {
  const live = findLiveRootRun(taskDir, probe);
  if (live) throw new RunnerError('TASK_LOCKED', liveRunMessage(projectId, taskId, live));
}

/** Some process holds the task's Ralph loop (<task>/TASK.lock, see task.ts); probed without waiting. */
function loopHeld(taskDir: string): boolean {
  return flockHeldByOther(join(taskDir, TASK_LOCK_FILE));
}

/**
 * For a server about to launch a loop (POST /api/v1/tasks): a live agent whose loop is gone is a
 * conflict (409). A task whose loop is held by a live process is left to the launcher's TASK.lock
 * handling.
 */
export function refuseOrphanedAgent(taskDir: string, projectId: string, taskId: string, probe?: LivenessProbe): void {
  if (loopHeld(taskDir)) return;
  refuseLiveRootRun(taskDir, projectId, taskId, probe);
}

/**
 * `--adopt` (and the planner after a server restart): wait for the live agent of a dead runner to
 * end, record its end, and return its run id so the loop continues as if it had started it.
 * Returns undefined when there is nothing to adopt, 'aborted' when the signal fires first.
 */
export async function adoptLiveRootRun(opts: {
  taskDir: string;
  probe: LivenessProbe;
  signal?: AbortSignal;
  pollMs?: number;
  post(type: string, body: string): Promise<void>;
  /** The adopting loop's fence: the record it closes is written as that owner's. */
  fence?: OwnerFence;
}): Promise<string | 'aborted' | undefined> {
  const { probe } = opts;
  const live = findLiveRootRun(opts.taskDir, probe);
  if (!live) return undefined;
  await opts.post('INFO', `adopting run ${live.runId} (pid ${live.pid}) of a runner that is gone; waiting for it to end`);
  const alive = () => agentAlive(live.pid, live.pgid, probe);
  while (alive()) {
    if (!(await sleep(opts.pollMs ?? ADOPT_POLL_MS, opts.signal))) return 'aborted';
  }
  const done = isTaskDone(opts.taskDir);
  await recordGoneRun(live.dir, done, 'runner died; agent adopted, exit code unknown', opts.fence).catch((err: unknown) => {
    if (isStaleEpoch(err)) throw err;
  });
  await opts.post('INFO', `adopted run ${live.runId} ended (${done ? 'DONE present' : 'no DONE'}); continuing the loop`);
  return live.runId;
}

/** Records the end of a root run whose processes are gone (completed when DONE is there); false if it had ended already. */
async function recordGoneRun(dir: string, done: boolean, failure: string, fence?: OwnerFence): Promise<boolean> {
  let changed = false;
  await updateRunInfo(runInfoFile(dir), (i) => {
    if (!isUnfinished(i)) return i;
    changed = true;
    i.end_time = new Date();
    i.status = done ? 'completed' : 'failed';
    i.exit_code = done ? 0 : -1;
    i.error_summary = done ? undefined : failure;
    return i;
  }, { fence });
  return changed;
}

/**
 * A loop start after a crash says what it found: every root run still recorded `running` whose
 * processes are gone (its runner was killed before it could record the end) is closed, as the
 * readers would heal it, and named on the bus. Runs of this process and live ones are left alone.
 */
export async function closeDeadRootRuns(opts: { taskDir: string; probe: LivenessProbe; post(type: string, body: string): Promise<void>; fence?: OwnerFence }): Promise<string[]> {
  const closed: string[] = [];
  for (const r of taskRuns(opts.taskDir).filter((run) => !run.info.parent_run_id && isUnfinished(run.info))) {
    const { pid, pgid } = r.info;
    if (pid === process.pid || agentAlive(pid, pgid, opts.probe)) continue;
    const done = isTaskDone(opts.taskDir);
    if (!(await recordGoneRun(r.dir, done, 'runner died before recording the end; no process left', opts.fence))) continue;
    closed.push(r.info.run_id);
    await opts.post('INFO', `found run ${r.info.run_id} left running by a runner that is gone (no process left); recorded as ${done ? 'completed (DONE present)' : 'failed'}`);
  }
  return closed;
}
