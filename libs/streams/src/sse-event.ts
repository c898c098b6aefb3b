import type { MessageEvent } from '@nestjs/common';
import { Observable, Subject, interval, map, merge, takeUntil } from 'rxjs';

/**
 * Builds an SSE event. Nest's SseStream gives every id-less data event an automatic per-connection
 * id (1, 2, …), which would overwrite the browser's Last-Event-ID with a meaningless number. Events
 * that must carry no `id:` line (status, heartbeat, run_start/run_end, done) therefore get an `id`
 * accessor that stays undefined and ignores that assignment. `data` is pre-serialised so Nest passes
 * the object through untouched (it copies object-data events field by field).
 */
export function sseEvent(type: string | undefined, data: unknown, id?: string): MessageEvent {
  const payload = typeof data === 'string' ? data : JSON.stringify(data ?? {});
  const event: Record<string, unknown> = { data: payload === '' ? '{}' : payload };
  if (type) event.type = type;
  if (id !== undefined) {
    event.id = id;
  } else {
    Object.defineProperty(event, 'id', { get: () => undefined, set: () => undefined, enumerable: true });
  }
  return event as unknown as MessageEvent;
}

export function heartbeats(intervalMs: number): Observable<MessageEvent> {
  return interval(intervalMs).pipe(map(() => sseEvent('heartbeat', {})));
}

/** Merges a stream with heartbeats and ends both when `shutdown$` fires (§7.5 fix: streams end on shutdown). */
export function withHeartbeat(events: Observable<MessageEvent>, intervalMs: number | undefined, shutdown$: Subject<void>): Observable<MessageEvent> {
  const parts = intervalMs ? merge(events, heartbeats(intervalMs)) : events;
  return parts.pipe(takeUntil(shutdown$));
}
