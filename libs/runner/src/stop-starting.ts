import { readRunInfo, RunInfo, runInfoFile, updateRunInfo } from '@app/storage';
import { isProcessRunning } from './process-tree';
import { isUnfinished } from './run-scan';
import { sleep } from './sleep';

/*
 * The stopping side of a stop that finds a `starting` record (job-prepare.ts runnerSentinel) or a
 * REST run's (`in_process`, job-rest.ts): its pid/pgid are the runner's (a server, a shell's job, a
 * parent agent's helper), never an agent process's, so nothing is signalled. The caller has left STOPPED-BY; the runner honours it (it does
 * not spawn, or stops the agent right after spawning: job-stop-request.ts, job-cli.ts).
 */

export function stoppedBeforeStartSummary(stoppedBy: string): string {
  return `stopped by ${stoppedBy} before the agent started`;
}

/** A stop waits at least this long for a `starting` runner (version detection may take 10 s). */
export const MIN_HANDOVER_WAIT_MS = 15_000;

export type Handover =
  | { kind: 'agent'; info: RunInfo } // the agent started before the runner saw the request: stop it by signal
  | { kind: 'ended'; info: RunInfo } // the runner ended the run without an agent
  | { kind: 'orphaned' } // the runner is gone: the caller finalises the record
  | { kind: 'timeout' };

/** Polls the run-info until the runner hands the record to its agent, ends the run, or dies. A REST run (`in_process`) only ends. */
export async function awaitHandover(runDir: string, runner: number, timeoutMs: number, pollMs = 50): Promise<Handover> {
  const path = runInfoFile(runDir);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let info: RunInfo | undefined;
    try {
      info = readRunInfo(path);
    } catch {
      // mid-rename or unreadable for a moment: poll again
    }
    if (info && !isUnfinished(info)) return { kind: 'ended', info };
    if (info && !runnerOwned(info)) return { kind: 'agent', info };
    if (!isProcessRunning(runner)) {
      const last = safeRead(path);
      if (last && !isUnfinished(last)) return { kind: 'ended', info: last };
      if (last && !runnerOwned(last)) return { kind: 'agent', info: last };
      return { kind: 'orphaned' };
    }
    if (Date.now() >= deadline) return { kind: 'timeout' };
    await sleep(Math.min(pollMs, Math.max(1, deadline - Date.now())));
  }
}

function safeRead(path: string): RunInfo | undefined {
  try {
    return readRunInfo(path);
  } catch {
    return undefined;
  }
}

/** The record names the runner, not an agent process: before the spawn, or a REST run (in the runner). */
export function runnerOwned(info: RunInfo): boolean {
  return info.starting === true || info.in_process === true;
}

/** Records the end of a runner-owned run whose runner died before it could. */
export async function finaliseStartingRun(runDir: string, summary: string): Promise<RunInfo | undefined> {
  return updateRunInfo(runInfoFile(runDir), (i) => {
    if (!isUnfinished(i) || !runnerOwned(i)) return i;
    return { ...i, status: 'failed', exit_code: -1, end_time: new Date(), error_summary: summary, starting: undefined, in_process: undefined };
  }).catch(() => undefined);
}
