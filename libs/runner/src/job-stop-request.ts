import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isStaleEpoch, type OwnerFence, RunInfo, updateRunInfo } from '@app/storage';
import { ensureOutputFile } from '@app/agents';
import type { JobResult } from './job-options';
import { errorText } from './runner.errors';
import { readStoppedBy, STOPPED_BY_FILE } from './stop';
import { stoppedBeforeStartSummary } from './stop-starting';

/*
 * The runner's side of a stop that arrived while its record was still `starting` (no agent yet):
 * `stop` never signals the runner, it leaves STOPPED-BY; the runner ends its waits on it and does
 * not start the agent (stop-starting.ts is the stopping side).
 */

/** Aborts when STOPPED-BY appears in the run folder (or the parent signal aborts); dispose() ends the polling. */
export function watchStopRequest(runDir: string, parent?: AbortSignal, pollMs = 100): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const path = join(runDir, STOPPED_BY_FILE);
  const check = (): void => {
    if (!controller.signal.aborted && existsSync(path)) controller.abort(`stopped by ${readStoppedBy(runDir) ?? 'a stop request'}`);
  };
  check();
  const timer = setInterval(check, pollMs);
  timer.unref();
  const signal = parent ? AbortSignal.any([controller.signal, parent]) : controller.signal;
  return { signal, dispose: () => clearInterval(timer) };
}

/**
 * A stop request found before the agent is spawned: the run ends `failed` with that summary and
 * no agent, no bus events (like a spawn failure, §2.1 step 7). Undefined when there is none.
 */
export async function finishIfStoppedBeforeStart(run: { runId: string; runDir: string; infoPath: string; fence?: OwnerFence }): Promise<JobResult | undefined> {
  const stoppedBy = readStoppedBy(run.runDir);
  if (!stoppedBy) return undefined;
  const summary = stoppedBeforeStartSummary(stoppedBy);
  run.fence?.check();
  try {
    ensureOutputFile(run.runDir);
  } catch {
    // nothing ran: there is no output to keep
  }
  let info: RunInfo | undefined;
  try {
    info = await updateRunInfo(run.infoPath, (i) => ({ ...i, status: 'failed', exit_code: -1, end_time: new Date(), error_summary: summary, starting: undefined }), { fence: run.fence });
  } catch (err) {
    if (isStaleEpoch(err)) throw err;
    return { runId: run.runId, runDir: run.runDir, ok: false, error: `${summary}; record it: ${errorText(err)}` };
  }
  return { runId: run.runId, runDir: run.runDir, info, ok: false, error: summary };
}
