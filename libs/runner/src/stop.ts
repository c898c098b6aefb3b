import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { readRunInfo, RunInfo, runInfoFile, updateRunInfo, writeStopRequested } from '@app/storage';
import { collectProcessTree, isProcessRunning, sendSignal } from './process-tree';
import { RunnerError } from './runner.errors';
import { ScannedRun, allRuns, descendantRuns, isUnfinished, rootOfRunDir, taskRuns } from './run-scan';
import { sleep } from './sleep';
import { awaitHandover, finaliseStartingRun, MIN_HANDOVER_WAIT_MS, runnerOwned, stoppedBeforeStartSummary } from './stop-starting';

export const DEFAULT_STOP_GRACE_MS = 30_000;
/** Written into a run folder by a stop so the owning runner can say who stopped the run. */
export const STOPPED_BY_FILE = 'STOPPED-BY';

export interface StopOptions {
  graceMs?: number;
  stoppedBy?: string;
  pollMs?: number;
}

export interface StopTaskOptions extends StopOptions {
  /** stopTask: write a permanent STOP-REQUESTED (nothing restarts the task, not even monitor). */
  permanent?: boolean;
}

/** A run a stop ended: the one asked for or a descendant stopped with it. */
export interface StoppedRun {
  runId: string;
  pid: number;
  /** The run's record was still its runner's: the agent never started. */
  beforeStart?: boolean;
}

export interface StopTaskResult {
  stoppedRuns: number;
  /** Every run stopped, root runs first, each followed by its descendants. */
  runs: StoppedRun[];
}

export interface StopRunResult {
  stopped: boolean;
  pid?: number;
  runId?: string;
  status?: string;
  /** The run's record was still its runner's: the agent never started (`pid` is the runner's). */
  beforeStart?: boolean;
  /** Its descendant runs (parent_run_id chain, any task) that were still running and were stopped with it. */
  descendants?: StoppedRun[];
}

export function readStoppedBy(runDir: string): string | undefined {
  const path = join(runDir, STOPPED_BY_FILE);
  if (!existsSync(path)) return undefined;
  return readFileSync(path, 'utf8').trim() || undefined;
}

const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };

/** Why a runner stops its agents on a signal, as run-info records it: the in-process runner's own pid, or a task supervisor's client's. */
export function signalStopReason(signal: string, pid: number = process.pid): string {
  return `run-agent (pid ${pid}) received ${signal}`;
}

export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (SIGNAL_NUMBERS[signal] ?? 15);
}

interface Targets {
  groups: number[];
  pids: number[];
}

function ownGroup(): number {
  try {
    return Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[2]);
  } catch {
    return -1;
  }
}

/**
 * An agent run is a session leader (pgid = pid): signal its group. A child sentinel (pid = the
 * `run-agent job` helper, which may share a group with unrelated processes) gets a per-process
 * signal instead, and its descendants are found through the process tree.
 */
function targetsOf(runs: RunInfo[]): Targets {
  const mine = ownGroup();
  const groups: number[] = [];
  const pids: number[] = [];
  for (const info of runs) {
    if (runnerOwned(info)) continue; // the runner's record, not an agent process's (stop-starting.ts)
    const pgid = info.pgid > 0 ? info.pgid : info.pid;
    if (pgid > 1 && pgid === info.pid && pgid !== mine) groups.push(pgid);
    else if (info.pid > 1 && info.pid !== process.pid) pids.push(info.pid);
  }
  return { groups, pids };
}

function signalAll(groups: number[], pids: number[], signal: NodeJS.Signals): void {
  for (const g of groups) sendSignal(-g, signal);
  for (const p of pids) sendSignal(p, signal);
}

async function waitGone(pids: number[], timeoutMs: number, pollMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let alive = pids.filter(isProcessRunning);
  while (alive.length > 0 && Date.now() < deadline) {
    await sleep(Math.min(pollMs, Math.max(1, deadline - Date.now())));
    alive = alive.filter(isProcessRunning);
  }
  return alive;
}

/**
 * SIGTERM to the groups and processes, wait up to the grace period for every process to be gone,
 * then SIGKILL the rest. Returns the last signal sent and any process that survived it.
 */
export async function terminateProcesses(
  groups: number[],
  pids: number[],
  graceMs: number,
  pollMs = 50,
): Promise<{ signal: NodeJS.Signals; alive: number[] }> {
  const all = [...new Set([...groups, ...pids])];
  if (graceMs > 0) {
    signalAll(groups, pids, 'SIGTERM');
    const alive = await waitGone(all, graceMs, pollMs);
    if (alive.length === 0) return { signal: 'SIGTERM', alive };
  }
  signalAll(groups, pids, 'SIGKILL');
  return { signal: 'SIGKILL', alive: await waitGone(all, 2000, pollMs) };
}

/**
 * D6: SIGTERM to the run's process group, to every descendant run (parent_run_id chain) and to
 * every process of the agent's tree that left its group (collected before signalling); after the
 * grace period, SIGKILL to whatever is left. Records who stopped it for the owning runner and,
 * if no runner finalises the run-info, finalises it here (128 + signal, failed).
 */
export async function stopRun(runDir: string, opts: StopOptions = {}): Promise<StopRunResult> {
  const infoPath = runInfoFile(runDir);
  if (!existsSync(infoPath)) throw new RunnerError('NOT_FOUND', `run-info.yaml not found in ${runDir}`);
  let info = readRunInfo(infoPath);
  if (!isUnfinished(info)) return { stopped: false, runId: info.run_id, status: info.status, pid: info.pid };
  if (info.process_ownership === 'external') {
    throw new RunnerError('EXTERNAL_RUN', `run ${info.run_id} is externally owned and cannot be stopped by conductor`);
  }
  const stoppedBy = opts.stoppedBy ?? `run-agent stop (pid ${process.pid})`;
  writeFileSync(join(runDir, STOPPED_BY_FILE), `${stoppedBy}\n`);
  if (runnerOwned(info)) {
    const runner = info.pid;
    const beforeStart = info.starting === true;
    const handover = await awaitHandover(runDir, runner, Math.max(opts.graceMs ?? DEFAULT_STOP_GRACE_MS, MIN_HANDOVER_WAIT_MS), opts.pollMs);
    if (handover.kind === 'timeout') {
      throw new RunnerError('STOP_TIMEOUT', `run ${info.run_id}: its runner (PID ${runner}) has not ended it yet; the stop is recorded and the runner will end it`);
    }
    if (handover.kind === 'orphaned') await finaliseStartingRun(runDir, beforeStart ? stoppedBeforeStartSummary(stoppedBy) : `stopped by ${stoppedBy}`);
    if (handover.kind !== 'agent') return { stopped: true, pid: runner, runId: info.run_id, beforeStart: beforeStart || undefined };
    info = handover.info;
  }
  const descendants = descendantRuns(allRuns(rootOfRunDir(runDir)), info.run_id).filter((r) => isUnfinished(r.info));
  const runs: ScannedRun[] = [{ dir: runDir, info }, ...descendants];
  for (const r of descendants) writeFileSync(join(r.dir, STOPPED_BY_FILE), `${stoppedBy}\n`);
  const { groups, pids } = targetsOf(runs.map((r) => r.info));
  const tree = collectProcessTree(groups, pids);

  const { signal, alive } = await terminateProcesses(groups, tree, opts.graceMs ?? DEFAULT_STOP_GRACE_MS, opts.pollMs);
  if (alive.length > 0) {
    throw new RunnerError('STOP_TIMEOUT', `run ${info.run_id} (PID ${info.pid}): ${alive.length} process(es) survived SIGKILL`);
  }
  await finaliseIfOrphaned(runs, signal, stoppedBy);
  const stoppedDescendants = descendants.map((r) => ({ runId: r.info.run_id, pid: r.info.pid }));
  return { stopped: true, pid: info.pid, runId: info.run_id, descendants: stoppedDescendants.length ? stoppedDescendants : undefined };
}

/** Gives the owning runner a moment to record the exit; if it is gone too, record it here. */
async function finaliseIfOrphaned(runs: ScannedRun[], signal: NodeJS.Signals, stoppedBy: string): Promise<void> {
  await sleep(300);
  for (const r of runs) {
    const path = runInfoFile(r.dir);
    let current: RunInfo;
    try {
      current = readRunInfo(path);
    } catch {
      continue;
    }
    if (!isUnfinished(current)) continue;
    if (runnerOwned(current)) {
      // a runner-owned run (no agent yet, or REST) is ended by its runner, unless the runner is gone
      if (!isProcessRunning(current.pid)) await finaliseStartingRun(r.dir, current.starting ? stoppedBeforeStartSummary(stoppedBy) : `stopped by ${stoppedBy}`);
      continue;
    }
    await updateRunInfo(path, (i) => {
      if (!isUnfinished(i)) return i;
      i.status = 'failed';
      i.exit_code = signalExitCode(signal);
      i.end_time = new Date();
      i.error_summary = `stopped by ${stoppedBy} (${signal})`;
      return i;
    }).catch(() => undefined);
  }
}

/**
 * Ends a task (D6): writes STOP-REQUESTED (the Ralph loop honours it and does not restart), then
 * stops every unfinished run of the task together with its descendants (sub-agent runs, in this
 * task or any other, whose parent_run_id chain leads to it): the whole tree, not one run of it.
 */
export async function stopTask(taskDir: string, opts: StopTaskOptions = {}): Promise<StopTaskResult> {
  if (!existsSync(taskDir)) throw new RunnerError('NOT_FOUND', `task directory not found: ${taskDir}`);
  writeStopRequested(taskDir, opts.permanent === true);
  const stoppedBy = opts.stoppedBy ?? `stop of task ${basename(taskDir)}`;
  const runs: StoppedRun[] = [];
  const done = new Set<string>();
  // root runs first: stopping a root takes its descendants with it, in one grace period
  const ordered = (list: ScannedRun[]) => [...list.filter((r) => !r.info.parent_run_id), ...list.filter((r) => r.info.parent_run_id)];
  for (const r of ordered(taskRuns(taskDir))) {
    if (!isUnfinished(r.info) || done.has(r.info.run_id)) continue;
    const result: StopRunResult = await stopRun(r.dir, { ...opts, stoppedBy }).catch((err) => {
      if (err instanceof RunnerError && err.code === 'EXTERNAL_RUN') return { stopped: false };
      throw err;
    });
    if (result.stopped) {
      runs.push({ runId: result.runId ?? r.info.run_id, pid: result.pid ?? r.info.pid, beforeStart: result.beforeStart });
      for (const d of result.descendants ?? []) {
        runs.push(d);
        done.add(d.runId);
      }
    }
    for (const d of taskRuns(taskDir)) if (!isUnfinished(d.info)) done.add(d.info.run_id);
  }
  return { stoppedRuns: runs.length, runs };
}
