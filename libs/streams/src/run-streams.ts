import type { MessageEvent } from '@nestjs/common';
import * as path from 'node:path';
import { Observable } from 'rxjs';
import { formatTime, readLines, type RunInfo, type StorageIndex } from '@app/storage';
import { SseChannel } from './channel';
import { RunDiscovery } from './run-discovery';
import { formatRunCursor, parseRunCursor, RunEvent, RunLogHub, RunRef, STDERR_FILE, STDOUT_FILE } from './run-log-hub';
import type { SseSettings } from './settings';
import { SseLifecycle } from './sse-lifecycle.service';
import { sseEvent, withHeartbeat } from './sse-event';

type Cursor = { s: number; e: number };

function logPayload(ref: RunRef, stream: string, line: string) {
  return { run_id: ref.runId, project_id: ref.projectId, task_id: ref.taskId, stream, line, timestamp: formatTime(new Date()) };
}

function statusPayload(ref: RunRef, status: string, exitCode: number) {
  return { run_id: ref.runId, project_id: ref.projectId, task_id: ref.taskId, status, exit_code: exitCode };
}

/**
 * Fan-in cursor (Last-Event-ID of #8 and #41): one `<run_id>:s=<n>;e=<m>` entry per run this
 * connection has sent log lines for, entries joined by `/` (run ids never contain `/`), e.g.
 * `20260101-1200000000-42-1:s=3;e=0/20260101-1200050000-42-2:s=7;e=1`.
 */
export function formatFanInCursor(cursors: Map<string, Cursor>): string {
  return [...cursors.entries()].map(([run, c]) => `${run}:${formatRunCursor(c)}`).join('/');
}

export function parseFanInCursor(text: string | undefined): Map<string, Cursor> {
  const out = new Map<string, Cursor>();
  for (const entry of (text ?? '').split('/')) {
    const colon = entry.indexOf(':');
    if (colon <= 0) continue;
    out.set(entry.slice(0, colon).trim(), parseRunCursor(entry.slice(colon + 1)));
  }
  return out;
}

/** What RunStreamsService reads of the server's context: runs root, run-info index, heartbeat interval. */
export interface RunStreamsContext {
  root: string;
  index: Pick<StorageIndex, 'runInfo'>;
  sse: Pick<SseSettings, 'heartbeatIntervalMs'>;
}

/** The per-run and fan-in log streams (#17, #8, #41); provided by the server (apps/api/src/sse/streams.providers.ts). */
export class RunStreamsService {
  constructor(
    private readonly ctx: RunStreamsContext,
    private readonly hub: RunLogHub,
    private readonly discovery: RunDiscovery,
    private readonly lifecycle: SseLifecycle,
  ) {}

  private finish(channel: SseChannel): Observable<MessageEvent> {
    return withHeartbeat(channel.asObservable(), this.ctx.sse.heartbeatIntervalMs, this.lifecycle.shutdown$);
  }

  /**
   * Subscribes one run to a connection: replays lines after `from` (when non-zero) and then passes
   * live events on. `idFor` renders the `id:` of a log event from the run's cursor.
   */
  private attach(
    channel: SseChannel,
    ref: RunRef,
    from: Cursor,
    idFor: (c: Cursor) => string,
    opts: { initialStatus: boolean; onStatus?: (e: Extract<RunEvent, { kind: 'status' }>) => void },
  ): boolean {
    let ready = false;
    const pending: RunEvent[] = [];
    const deliver = (event: RunEvent) => {
      if (event.kind === 'log') {
        channel.push(sseEvent('log', logPayload(ref, event.stream, event.line), idFor({ s: event.s, e: event.e })));
      } else {
        channel.push(sseEvent('status', statusPayload(ref, event.status, event.exitCode)));
        opts.onStatus?.(event);
      }
    };
    const sub = this.hub.subscribe(ref, (event) => (ready ? deliver(event) : pending.push(event)));
    if (!sub) return false;
    channel.onClose(() => sub.unsubscribe());
    if (opts.initialStatus) channel.push(sseEvent('status', statusPayload(ref, sub.status, sub.exitCode)));
    this.replay(ref, from, sub.counts, deliver);
    ready = true;
    for (const e of pending.splice(0)) deliver(e);
    return true;
  }

  /** Replays lines (from, upTo] of both files; nothing when `from` is zero (live only). */
  private replay(ref: RunRef, from: Cursor, upTo: Cursor, deliver: (e: Extract<RunEvent, { kind: 'log' }>) => void): void {
    if (from.s <= 0 && from.e <= 0) return;
    const outLines = readLines(path.join(ref.runDir, STDOUT_FILE), from.s, upTo.s, this.ctx.root);
    const sEnd = from.s + outLines.length;
    outLines.forEach((line, i) => deliver({ kind: 'log', stream: 'stdout', line, s: from.s + i + 1, e: from.e }));
    const errLines = readLines(path.join(ref.runDir, STDERR_FILE), from.e, upTo.e, this.ctx.root);
    errLines.forEach((line, i) => deliver({ kind: 'log', stream: 'stderr', line, s: Math.max(from.s, sEnd), e: from.e + i + 1 }));
  }

  /** run_start/run_end data: what the React log panel prints (agent, start_time, end_time, exit_code). */
  private runEdgePayload(ref: RunRef, status: string, exitCode: number) {
    let info: RunInfo | undefined;
    try {
      info = this.ctx.index.runInfo(ref.projectId, ref.taskId, ref.runId);
    } catch {
      info = undefined;
    }
    return {
      ...statusPayload(ref, status, exitCode),
      agent: info?.agent ?? '',
      start_time: formatTime(info?.start_time),
      end_time: formatTime(info?.end_time),
    };
  }

  private finishedInfo(ref: RunRef): { status: string; exit_code: number } | undefined {
    try {
      const info = this.ctx.index.runInfo(ref.projectId, ref.taskId, ref.runId);
      return info && (info.status === 'completed' || info.status === 'failed') ? info : undefined;
    } catch {
      return undefined;
    }
  }

  /** #17: one run; undefined when the per-run client limit is reached (the server answers 429). */
  singleRun(ref: RunRef, lastEventId: string | undefined, signal?: AbortSignal): Observable<MessageEvent> | undefined {
    const channel = new SseChannel(signal);
    const ok = this.attach(channel, ref, parseRunCursor(lastEventId), formatRunCursor, { initialStatus: true });
    if (!ok) return undefined;
    return this.finish(channel);
  }

  /**
   * #8 (all runs) and #41 (one task's runs): every known run plus runs discovered later. Runs at the
   * client limit are skipped for this connection. `runEvents` adds `run_start`/`run_end` (#41, D12).
   */
  fanIn(initial: RunRef[], accept: (r: RunRef) => boolean, lastEventId: string | undefined, runEvents: boolean, watchFolder?: string, signal?: AbortSignal): Observable<MessageEvent> {
    const channel = new SseChannel(signal);
    const resume = parseFanInCursor(lastEventId);
    const cursors = new Map<string, Cursor>();
    for (const [run, c] of resume) cursors.set(run, c);
    const subscribed = new Set<string>();
    const add = (ref: RunRef, discovered: boolean) => {
      if (subscribed.has(ref.runId) || !accept(ref)) return;
      subscribed.add(ref.runId);
      const idFor = (c: Cursor) => {
        cursors.set(ref.runId, c);
        return formatFanInCursor(cursors);
      };
      const onStatus = runEvents
        ? (e: Extract<RunEvent, { kind: 'status' }>) => {
            if (e.previous === 'running' && e.status !== 'running') channel.push(sseEvent('run_end', this.runEdgePayload(ref, e.status, e.exitCode)));
          }
        : undefined;
      const from = resume.get(ref.runId) ?? { s: 0, e: 0 };
      const finished = this.finishedInfo(ref);
      if (finished) {
        // A finished run writes no more lines: its status and any missed lines are sent once,
        // without holding tailers for it (a root with thousands of old runs stays cheap).
        channel.push(sseEvent('status', statusPayload(ref, finished.status, finished.exit_code)));
        this.replay(ref, from, { s: Number.MAX_SAFE_INTEGER, e: Number.MAX_SAFE_INTEGER }, (ev) =>
          channel.push(sseEvent('log', logPayload(ref, ev.stream, ev.line), idFor({ s: ev.s, e: ev.e }))),
        );
        return;
      }
      const ok = this.attach(channel, ref, from, idFor, { initialStatus: true, onStatus });
      if (ok && discovered && runEvents) channel.push(sseEvent('run_start', this.runEdgePayload(ref, 'running', -1)));
    };
    for (const ref of initial) add(ref, false);
    const stop = this.discovery.subscribe((fresh) => fresh.forEach((r) => add(r, true)));
    channel.onClose(stop);
    if (watchFolder) channel.onClose(this.discovery.watchFolder(watchFolder));
    return this.finish(channel);
  }
}
