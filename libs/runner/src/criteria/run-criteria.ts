import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import type { CriterionResult, RunCriteria } from '@app/storage';
import { sendSignal } from '../process-tree';
import { DEFAULT_DONE_CRITERION_TIMEOUT_MS, DoneCriterion } from './criteria-settings';

/** What the runner keeps of a command's combined output while it runs. */
const OUTPUT_KEEP = 64 * 1024;
/** The tail that goes into run-info and the next attempt's prompt. */
export const OUTPUT_TAIL_LINES = 60;
export const OUTPUT_TAIL_CHARS = 4000;
/** After the group's SIGTERM on timeout, SIGKILL follows after this long. */
const KILL_GRACE_MS = 2000;
/** After the command exited, how long its output pipes may stay open (a daemonised grandchild). */
const DRAIN_MS = 1000;

export interface CriteriaRunOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  defaultTimeoutMs?: number;
  signal?: AbortSignal;
}

export function outputTail(text: string): string {
  const lines = text.trimEnd().split('\n').slice(-OUTPUT_TAIL_LINES).join('\n');
  return lines.length > OUTPUT_TAIL_CHARS ? lines.slice(-OUTPUT_TAIL_CHARS) : lines;
}

/**
 * Runs one criterion through `sh -c` in its own process group; on timeout (or abort) the whole
 * group is terminated (SIGTERM, then SIGKILL), and after a normal exit any member it left behind
 * is killed too. Exit 126/127 (not executable / not found) is reported as "cannot start".
 */
export function runCriterion(c: DoneCriterion, opts: CriteriaRunOptions): Promise<CriterionResult> {
  const started = Date.now();
  const timeoutMs = c.timeout_ms ?? opts.defaultTimeoutMs ?? DEFAULT_DONE_CRITERION_TIMEOUT_MS;
  const base = { command: c.command };
  if (!existsSync(opts.cwd) || !statSync(opts.cwd).isDirectory()) {
    return Promise.resolve({ ...base, exit_code: -1, passed: false, duration_ms: 0, error: `cannot start: working directory ${opts.cwd} does not exist` });
  }
  return new Promise((resolve) => {
    let output = '';
    let timedOut = false;
    let aborted = false;
    let settled = false;
    const child = spawn('/bin/sh', ['-c', c.command], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const pgid = child.pid;
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString()).slice(-OUTPUT_KEEP);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    let killTimer: NodeJS.Timeout | undefined;
    const killGroup = (): void => {
      if (!pgid) return;
      sendSignal(-pgid, 'SIGTERM');
      killTimer = setTimeout(() => sendSignal(-pgid, 'SIGKILL'), KILL_GRACE_MS);
      killTimer.unref();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    const onAbort = (): void => {
      aborted = true;
      killGroup();
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (r: Omit<CriterionResult, 'command' | 'duration_ms'>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      // nothing of the criterion outlives it
      if (pgid) sendSignal(-pgid, 'SIGKILL');
      child.stdout?.destroy();
      child.stderr?.destroy();
      const result: CriterionResult = { ...base, ...r, duration_ms: Date.now() - started };
      if (!result.passed && output.trim()) result.output_tail = outputTail(output);
      resolve(result);
    };
    child.on('error', (err) => finish({ exit_code: -1, passed: false, error: `cannot start: ${err.message}` }));
    child.on('exit', (code, signal) => {
      const done = (): void => {
        if (timedOut) finish({ exit_code: -1, passed: false, timed_out: true, error: `timed out after ${Math.round(timeoutMs / 1000)}s; its process group was killed` });
        else if (aborted) finish({ exit_code: -1, passed: false, error: 'interrupted: the task was stopped' });
        else if (code === 127 || code === 126) finish({ exit_code: code, passed: false, error: `cannot start: ${code === 127 ? 'command not found' : 'command not executable'} (exit ${code})` });
        else if (code === null) finish({ exit_code: -1, passed: false, error: `killed by ${signal ?? 'a signal'}` });
        else finish({ exit_code: code, passed: code === 0 });
      };
      // wait for the output pipes (bounded: a daemonised grandchild may hold them open)
      const drain = setTimeout(done, DRAIN_MS);
      child.on('close', () => {
        clearTimeout(drain);
        done();
      });
    });
  });
}

/** Runs the criteria in order, stopping at the first that does not pass. */
export async function runCriteria(criteria: DoneCriterion[], opts: CriteriaRunOptions): Promise<RunCriteria> {
  const checked_at = new Date();
  if (criteria.length === 0) {
    return { passed: false, reason: 'the completion criteria list is empty: nothing verified the DONE (fail closed)', checked_at, results: [] };
  }
  const results: CriterionResult[] = [];
  for (const c of criteria) {
    const r = await runCriterion(c, opts);
    results.push(r);
    if (!r.passed) {
      const why = r.error ?? `exit code ${r.exit_code}`;
      return { passed: false, reason: `criterion ${JSON.stringify(r.command)} failed: ${why}`, checked_at, results };
    }
  }
  return { passed: true, checked_at, results };
}
