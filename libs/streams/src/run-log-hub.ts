import * as path from 'node:path';
import { ChangeFeed, FileTailRegistry, LineView, RUN_STDERR_FILE as STDERR_FILE, RUN_STDOUT_FILE as STDOUT_FILE, runInfoFile, type RunInfo } from '@app/storage';
import type { SseSettings } from './settings';

export interface RunRef {
  runId: string;
  projectId: string;
  taskId: string;
  runDir: string;
}

export type StreamName = 'stdout' | 'stderr';

export type RunEvent =
  | { kind: 'log'; stream: StreamName; line: string; s: number; e: number }
  | { kind: 'status'; status: string; exitCode: number; previous?: string };

export type RunListener = (event: RunEvent) => void;

export { RUN_STDERR_FILE as STDERR_FILE, RUN_STDOUT_FILE as STDOUT_FILE } from '@app/storage';

/** One shared tail per run: stdout/stderr line views plus run-info status, fanned out to subscribers. */
class RunStream {
  readonly listeners = new Set<RunListener>();
  readonly stdout: LineView;
  readonly stderr: LineView;
  status = '';
  exitCode = -1;
  private readonly stopInfoWatch: () => void;

  constructor(
    readonly ref: RunRef,
    private readonly files: FileTailRegistry,
    feed: ChangeFeed,
    pollMs: number,
    private readonly readInfo: (path: string) => RunInfo,
    recheckMs?: number,
  ) {
    const emit = (event: RunEvent) => {
      for (const l of [...this.listeners]) l(event);
    };
    this.stdout = new LineView(files.acquire(path.join(ref.runDir, STDOUT_FILE)), (line, n) =>
      emit({ kind: 'log', stream: 'stdout', line, s: n, e: this.stderr?.count ?? 0 }),
    );
    this.stderr = new LineView(files.acquire(path.join(ref.runDir, STDERR_FILE)), (line, n) =>
      emit({ kind: 'log', stream: 'stderr', line, s: this.stdout.count, e: n }),
    );
    this.readStatus();
    const check = () => {
      const previous = this.status;
      const prevCode = this.exitCode;
      this.readStatus();
      if (this.status !== previous || this.exitCode !== prevCode) emit({ kind: 'status', status: this.status, exitCode: this.exitCode, previous });
    };
    let stop: () => void = () => undefined;
    try {
      stop = feed.watch(runInfoFile(ref.runDir), check, { pollMs });
    } catch {
      // ChangeFeed polls as well; a failed watch only loses the fast path
    }
    const recheck = recheckMs ? setInterval(check, recheckMs) : undefined;
    recheck?.unref();
    this.stopInfoWatch = () => {
      clearInterval(recheck);
      stop();
    };
  }

  readStatus(): void {
    try {
      const info = this.readInfo(runInfoFile(this.ref.runDir));
      this.status = info.status;
      this.exitCode = info.status === 'running' ? -1 : info.exit_code;
    } catch {
      this.status = 'unknown';
      this.exitCode = -1;
    }
  }

  close(): void {
    this.stopInfoWatch();
    this.stdout.close();
    this.stderr.close();
    this.files.release(this.stdout.tail.path);
    this.files.release(this.stderr.tail.path);
  }
}

export interface RunSubscription {
  counts: { s: number; e: number };
  status: string;
  exitCode: number;
  unsubscribe(): void;
}

/** What RunLogHub reads of the server's context: the runs root (tails stay below it) and the SSE settings. */
export interface RunLogHubContext {
  root: string;
  sse: Pick<SseSettings, 'pollIntervalMs' | 'maxClientsPerRun'>;
}

/**
 * Shared per-run log tailers (D15): one per run regardless of how many SSE clients follow it.
 * The server provides it (apps/api/src/sse/streams.providers.ts) with its context, `readInfo`,
 * which reads a run-info as SSE reports it (pid probe, or the worker heartbeat with --nats), and
 * `recheckMs`: re-read each followed run's status this often even when no file changes (--nats).
 */
export class RunLogHub {
  private readonly runs = new Map<string, RunStream>();
  readonly files: FileTailRegistry;

  constructor(
    private readonly ctx: RunLogHubContext,
    private readonly feed: ChangeFeed,
    readonly readInfo: (path: string) => RunInfo,
    private readonly recheckMs?: number,
  ) {
    this.files = new FileTailRegistry(feed, ctx.sse.pollIntervalMs, ctx.root);
  }

  clientCount(runId: string): number {
    return this.runs.get(runId)?.listeners.size ?? 0;
  }

  /** Subscribes unless the per-run client limit is reached (then undefined). */
  subscribe(ref: RunRef, listener: RunListener): RunSubscription | undefined {
    let stream = this.runs.get(ref.runId);
    if (stream && stream.listeners.size >= this.ctx.sse.maxClientsPerRun) return undefined;
    if (!stream) {
      stream = new RunStream(ref, this.files, this.feed, this.ctx.sse.pollIntervalMs, this.readInfo, this.recheckMs);
      this.runs.set(ref.runId, stream);
    }
    stream.listeners.add(listener);
    const s = stream;
    return {
      counts: { s: s.stdout.count, e: s.stderr.count },
      status: s.status,
      exitCode: s.exitCode,
      unsubscribe: () => {
        s.listeners.delete(listener);
        if (s.listeners.size === 0 && this.runs.get(ref.runId) === s) {
          s.close();
          this.runs.delete(ref.runId);
        }
      },
    };
  }

  get activeRuns(): number {
    return this.runs.size;
  }

  onApplicationShutdown(): void {
    for (const s of this.runs.values()) s.close();
    this.runs.clear();
    this.files.closeAll();
  }
}

/** Parses a single-run cursor: `N`, or `s=N;e=M` (separators `;`, `,`, `|`; `=` or `:`; keys s/stdout/out, e/stderr/err). */
export function parseRunCursor(text: string | undefined): { s: number; e: number } {
  const cursor = { s: 0, e: 0 };
  const raw = (text ?? '').trim();
  if (raw === '') return cursor;
  if (/^\d+$/.test(raw)) return { s: Number(raw), e: Number(raw) };
  for (const part of raw.split(/[;,|]/)) {
    const m = /^\s*([a-z]+)\s*[=:]\s*(\d+)\s*$/i.exec(part);
    if (!m) continue;
    const key = m[1].toLowerCase();
    if (['s', 'stdout', 'out'].includes(key)) cursor.s = Number(m[2]);
    if (['e', 'stderr', 'err'].includes(key)) cursor.e = Number(m[2]);
  }
  return cursor;
}

export function formatRunCursor(c: { s: number; e: number }): string {
  return `s=${c.s};e=${c.e}`;
}
