import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRunInfo, runInfoFile } from '@app/storage';
import { formatGoDuration } from '../go-duration';
import { everyWithoutOverlap } from '../sleep';
import { terminateProcesses } from '../stop';

/** Run-folder marker present while the run is flagged stalled (the UI and `status` read it). */
export const STALLED_FILE = 'STALLED';
export const STALL_META_KIND = 'stalled';

export interface StallWatchOptions {
  runsDir: string;
  busPath: string;
  /** No output and no bus activity for this long flags the run. */
  stallAfterMs: number;
  /** Also terminate the stalled run's process group (the loop then restarts as after a failure). */
  kill?: boolean;
  pollMs?: number;
  post(type: string, body: string, meta: Record<string, string>, runId: string): Promise<void>;
}

function mtimeMs(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** Latest modification in the run folder (agent output, run-info) or of the task bus. */
function lastActivity(runDir: string, busPath: string): number {
  let last = mtimeMs(busPath);
  for (const name of readdirSync(runDir)) if (name !== STALLED_FILE) last = Math.max(last, mtimeMs(join(runDir, name)));
  return last;
}

function currentRun(runsDir: string): string | undefined {
  if (!existsSync(runsDir)) return undefined;
  const runs = readdirSync(runsDir).sort();
  return runs.length ? join(runsDir, runs[runs.length - 1]) : undefined;
}

/**
 * Watches the task's newest run while the loop waits for it: after `stallAfterMs` without output
 * or bus activity it writes <run>/STALLED and posts a WARNING (meta kind=stalled) once; new activity
 * clears the marker. Returns the function that stops watching.
 */
export function watchStall(opts: StallWatchOptions): () => void {
  const pollMs = opts.pollMs ?? Math.max(50, Math.min(5000, Math.floor(opts.stallAfterMs / 4)));
  let flagged: { runDir: string; at: number; killed: boolean } | undefined;
  const tick = async (): Promise<void> => {
    const runDir = currentRun(opts.runsDir);
    if (!runDir || !existsSync(runInfoFile(runDir))) return;
    const info = readRunInfo(runInfoFile(runDir));
    if (info.status !== 'running') return;
    const last = lastActivity(runDir, opts.busPath);
    if (flagged && flagged.runDir === runDir) {
      // a killed run keeps its marker: what it writes while dying is not new activity
      if (!flagged.killed && last > flagged.at) {
        rmSync(join(runDir, STALLED_FILE), { force: true });
        flagged = undefined;
      }
      return;
    }
    if (Date.now() - last < opts.stallAfterMs) return;
    writeFileSync(join(runDir, STALLED_FILE), `${new Date().toISOString()}\n`);
    const body = `run ${info.run_id} stalled: no output and no bus activity for ${formatGoDuration(opts.stallAfterMs)}${opts.kill ? '; terminating it' : ''}`;
    await opts.post('WARNING', body, { kind: STALL_META_KIND }, info.run_id);
    flagged = { runDir, at: lastActivity(runDir, opts.busPath), killed: opts.kill === true };
    if (opts.kill) {
      const pgid = info.pgid > 0 ? info.pgid : info.pid;
      if (pgid > 1) await terminateProcesses([pgid], [], 2000);
    }
  };
  return everyWithoutOverlap(tick, pollMs, { unref: true });
}

/** True when the run folder carries the STALLED marker. */
export function isRunStalled(runDir: string): boolean {
  return existsSync(join(runDir, STALLED_FILE));
}
