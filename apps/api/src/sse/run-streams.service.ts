import { Inject, Injectable, MessageEvent } from '@nestjs/common';
import * as path from 'node:path';
import { Observable } from 'rxjs';
import { API_CONTEXT, ApiContext } from '../common/api-context';
import { ApiError } from '../common/api-error';
import { formatTime } from '../common/go-format';
import { SseChannel } from './channel';
import { RunDiscovery } from './run-discovery.service';
import { readLines } from './file-tail';
import { formatRunCursor, parseRunCursor, RunEvent, RunLogHub, RunRef, STDERR_FILE, STDOUT_FILE } from './run-log-hub';
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

@Injectable()
export class RunStreamsService {
  constructor(
    @Inject(API_CONTEXT) private readonly ctx: ApiContext,
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
    const now = sub.counts;
    if (from.s > 0 || from.e > 0) {
      const outLines = readLines(path.join(ref.runDir, STDOUT_FILE), from.s, now.s);
      outLines.forEach((line, i) => deliver({ kind: 'log', stream: 'stdout', line, s: from.s + i + 1, e: Math.min(from.e, now.e) }));
      const errLines = readLines(path.join(ref.runDir, STDERR_FILE), from.e, now.e);
      errLines.forEach((line, i) => deliver({ kind: 'log', stream: 'stderr', line, s: Math.max(from.s, now.s), e: from.e + i + 1 }));
    }
    ready = true;
    for (const e of pending.splice(0)) deliver(e);
    return true;
  }

  /** #17: one run; 429 when the per-run client limit is reached. */
  singleRun(ref: RunRef, lastEventId: string | undefined): Observable<MessageEvent> {
    const channel = new SseChannel();
    const ok = this.attach(channel, ref, parseRunCursor(lastEventId), formatRunCursor, { initialStatus: true });
    if (!ok) throw new ApiError('TOO_MANY_REQUESTS', 'max clients reached for run');
    return this.finish(channel);
  }

  /**
   * #8 (all runs) and #41 (one task's runs): every known run plus runs discovered later. Runs at the
   * client limit are skipped for this connection. `runEvents` adds `run_start`/`run_end` (#41, D12).
   */
  fanIn(initial: RunRef[], accept: (r: RunRef) => boolean, lastEventId: string | undefined, runEvents: boolean): Observable<MessageEvent> {
    const channel = new SseChannel();
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
            if (e.previous === 'running' && e.status !== 'running') channel.push(sseEvent('run_end', statusPayload(ref, e.status, e.exitCode)));
          }
        : undefined;
      const ok = this.attach(channel, ref, resume.get(ref.runId) ?? { s: 0, e: 0 }, idFor, { initialStatus: true, onStatus });
      if (ok && discovered && runEvents) channel.push(sseEvent('run_start', statusPayload(ref, 'running', -1)));
    };
    for (const ref of initial) add(ref, false);
    const stop = this.discovery.subscribe((fresh) => fresh.forEach((r) => add(r, true)));
    channel.onClose(stop);
    return this.finish(channel);
  }
}
