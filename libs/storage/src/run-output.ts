import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ChangeFeed } from './change-feed';
import { FileTail } from './file-tail';
import type { LivenessProbe } from './liveness';
import { readRunInfoReconciled } from './reconcile';
import { readRunInfo } from './run-info';
import { readRecordText } from './safe-read';
import { RUN_PROMPT_FILE, RUN_STDERR_FILE, RUN_STDOUT_FILE, runInfoFile, runOutputFile } from './run-files';

/** The files of a run that `run-agent output --file` prints (cli-storage.md §7.4). */
export type RunOutputFile = 'output' | 'stdout' | 'stderr' | 'prompt';

/** Tunables of `run-agent output --follow` (cli-storage.md §7.4). */
export const FOLLOW_OUTPUT = {
  fileWaitMs: 5000,
  idleMs: 60_000,
  /** Liveness re-check when no file event arrives: a dead writer produces no events. */
  recheckMs: 1000,
};

/** The file a finished run prints for `file`: output is output.md, else agent-stdout.txt. */
export function resolveRunOutputFile(runDir: string, file: RunOutputFile): string {
  if (file === 'output') {
    const outputMd = runOutputFile(runDir);
    if (existsSync(outputMd)) return outputMd;
    const fallback = join(runDir, RUN_STDOUT_FILE);
    if (existsSync(fallback)) return fallback;
    throw new Error(`file not found: ${outputMd} (also tried ${RUN_STDOUT_FILE})`);
  }
  const path = liveRunFile(runDir, file);
  if (!existsSync(path)) throw new Error(`file not found: ${path}`);
  return path;
}

/** The file that grows while a run is live: output and stdout both follow agent-stdout.txt. */
export function liveRunFile(runDir: string, file: RunOutputFile): string {
  if (file === 'stderr') return join(runDir, RUN_STDERR_FILE);
  if (file === 'prompt') return join(runDir, RUN_PROMPT_FILE);
  return join(runDir, RUN_STDOUT_FILE);
}

/** Lines of `text`, each ending in `\n` (CRs dropped); `tail` > 0 keeps the last lines only. */
export function renderLines(text: string, tail: number): string {
  if (text === '') return '';
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const kept = tail > 0 ? lines.slice(-tail) : lines;
  return kept.map((line) => `${line.endsWith('\r') ? line.slice(0, -1) : line}\n`).join('');
}

/** The printed text of a run's file (`run-agent output` without `--follow`). */
export function readRunOutput(runDir: string, file: RunOutputFile, tail: number): string {
  const path = resolveRunOutputFile(runDir, file);
  if (statSync(path).isDirectory()) throw new Error(`${path} is a directory`);
  return renderLines(readRecordText(path, Number.MAX_SAFE_INTEGER), tail);
}

/** An existing run folder given by path (`--run-dir`). */
export function checkRunDir(dir: string): string {
  if (!existsSync(dir)) throw new Error(`run directory ${dir}: no such file or directory`);
  return dir;
}

function runStatus(infoPath: string, probe: LivenessProbe | undefined, reconcile: boolean): string | undefined {
  try {
    return (reconcile ? readRunInfoReconciled(infoPath, probe) : readRunInfo(infoPath)).status;
  } catch {
    return undefined;
  }
}

export interface FollowRunOutputOptions {
  feed: ChangeFeed;
  probe?: LivenessProbe;
  write: (text: string) => void;
  /** Aborting ends the follow; the result is then 'interrupted'. */
  signal?: AbortSignal;
}

/**
 * Follows the live file of a run through the shared FileTail (D15's tailer). A run that is not
 * running prints its file once. Ends after a final read as soon as the run is no longer running —
 * including a "running" run whose process died (reconciled) — after `FOLLOW_OUTPUT.idleMs` without
 * new bytes, or when `signal` aborts. File-change events wake it; `recheckMs` is the fallback.
 */
export async function followRunOutput(runDir: string, file: RunOutputFile, opts: FollowRunOutputOptions): Promise<'ended' | 'idle' | 'interrupted'> {
  const infoPath = runInfoFile(runDir);
  const initial = runStatus(infoPath, opts.probe, false);
  if (initial !== undefined && initial !== 'running') {
    opts.write(renderLines(readRecordText(resolveRunOutputFile(runDir, file), Number.MAX_SAFE_INTEGER), 0));
    return 'ended';
  }
  const path = liveRunFile(runDir, file);
  const waitUntil = Date.now() + FOLLOW_OUTPUT.fileWaitMs;
  while (!existsSync(path)) {
    const left = waitUntil - Date.now();
    if (left <= 0) throw new Error(`output file not found: ${path}`);
    await waitForChange(opts.feed, [path], Math.min(left, 500), opts.signal);
    if (opts.signal?.aborted) return 'interrupted';
  }

  let lastData = Date.now();
  const tail = new FileTail(path, opts.feed, FOLLOW_OUTPUT.recheckMs, false);
  tail.on((chunk) => {
    lastData = Date.now();
    opts.write(chunk);
  });
  try {
    for (;;) {
      if (opts.signal?.aborted) return 'interrupted';
      tail.poll();
      const status = runStatus(infoPath, opts.probe, true);
      if (status !== undefined && status !== 'running') {
        tail.poll();
        return 'ended';
      }
      const idleLeft = FOLLOW_OUTPUT.idleMs - (Date.now() - lastData);
      if (idleLeft <= 0) return 'idle';
      await waitForChange(opts.feed, [path, infoPath], Math.min(FOLLOW_OUTPUT.recheckMs, idleLeft), opts.signal);
    }
  } finally {
    tail.close();
  }
}

/**
 * Copies what a run writes to agent-stdout.txt (through the shared FileTail) until `done` settles,
 * then reads what is left (`run-agent job --follow`).
 */
export async function followRunStdout(runDir: string, done: Promise<unknown>, opts: { feed: ChangeFeed; write: (text: string) => void; pollMs?: number }): Promise<void> {
  const tail = new FileTail(join(runDir, RUN_STDOUT_FILE), opts.feed, opts.pollMs ?? 100, false);
  tail.on((chunk) => opts.write(chunk));
  try {
    await done.then(
      () => undefined,
      () => undefined,
    );
    tail.poll();
  } finally {
    tail.close();
  }
}

/** Resolves on the first change under one of `paths`, after `maxMs`, or when `signal` aborts. */
export function waitForChange(feed: ChangeFeed, paths: string[], maxMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const stops: Array<() => void> = [];
    let settled = false;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', finish);
      stops.forEach((stop) => stop());
      resolve();
    };
    const timer = setTimeout(finish, Math.max(0, maxMs));
    if (signal?.aborted) return finish();
    signal?.addEventListener('abort', finish);
    for (const path of paths) {
      try {
        stops.push(feed.watch(path, finish));
      } catch {
        // not watchable (e.g. missing): the timer covers it
      }
    }
  });
}
