import type { MessageEvent } from '@nestjs/common';
import * as fs from 'node:fs';
import { Observable } from 'rxjs';
import { ChangeFeed, formatTime, isZeroWireTime } from '@app/storage';
import { BusCursor, BusError, BusMessage, readMessages } from '@app/messagebus';
import { SseChannel } from './channel';
import { SseLifecycle } from './sse-lifecycle.service';
import { sseEvent, withHeartbeat } from './sse-event';
import { resyncEvent } from './resync';
import type { SseSettings } from './settings';

export const HYDRATION_COUNT = 20;

type BusListener = (messages: BusMessage[]) => void;

/** One shared incremental reader per bus file (BusCursor keeps the byte offset: O(new bytes)). */
class BusTail {
  readonly listeners = new Set<BusListener>();
  private cursor: BusCursor;
  private readonly stopWatch: () => void;

  constructor(
    readonly path: string,
    feed: ChangeFeed,
    pollMs: number,
    private readonly onNew: (m: BusMessage[]) => void,
  ) {
    this.cursor = new BusCursor(path, { fromEnd: true });
    let stop: () => void = () => undefined;
    try {
      stop = feed.watch(path, () => this.poll(), { pollMs });
    } catch {
      // ChangeFeed polls as well; a failed watch only loses the fast path
    }
    this.stopWatch = stop;
  }

  poll(): void {
    let messages: BusMessage[];
    try {
      messages = this.cursor.readNew();
    } catch {
      return; // transient read errors: retried on the next wake-up
    }
    if (messages.length === 0) return;
    this.onNew(messages);
    for (const l of [...this.listeners]) l(messages);
  }

  close(): void {
    this.stopWatch();
  }
}

/** SSE payload of a bus message (api.md §2.4): flat parent ids, no links, zero time → now. */
export function sseMessagePayload(m: BusMessage) {
  return {
    msg_id: m.msg_id,
    timestamp: formatTime(isZeroWireTime(m.ts) ? new Date() : m.ts),
    type: m.type || undefined,
    project_id: m.project_id || undefined,
    task_id: m.task_id || undefined,
    run_id: m.run_id || undefined,
    issue_id: m.issue_id || undefined,
    parents: m.parents?.length ? m.parents.map((p) => p.msg_id) : undefined,
    meta: m.meta && Object.keys(m.meta).length ? m.meta : undefined,
    body: m.body,
  };
}

/**
 * The SSE event of a bus message, built (and JSON-serialised) once however many clients receive
 * it: the shared tail hands the same message objects to every listener. Events with an id are
 * not modified by Nest's SseStream, so one object can be written to every stream.
 */
const eventCache = new WeakMap<BusMessage, MessageEvent>();
export function busMessageEvent(m: BusMessage): MessageEvent {
  let event = eventCache.get(m);
  if (!event) {
    event = sseEvent('message', sseMessagePayload(m), m.msg_id);
    eventCache.set(m, event);
  }
  return event;
}

/**
 * Shared bus tails for the message SSE streams; provided by the server (apps/api/src/sse/streams.providers.ts).
 * `onMessages` is called once per batch of new messages read from a bus (the server counts them).
 */
export class BusHub {
  private readonly tails = new Map<string, BusTail>();

  constructor(
    private readonly ctx: { sse: Pick<SseSettings, 'pollIntervalMs' | 'heartbeatIntervalMs'> },
    private readonly feed: ChangeFeed,
    private readonly lifecycle: SseLifecycle,
    private readonly onMessages?: (msgIds: string[]) => void,
  ) {}

  get tailCount(): number {
    return this.tails.size;
  }

  private subscribe(path: string, listener: BusListener): () => void {
    let tail = this.tails.get(path);
    if (!tail) {
      tail = new BusTail(path, this.feed, this.ctx.sse.pollIntervalMs, (m) => this.onMessages?.(m.map((x) => x.msg_id)));
      this.tails.set(path, tail);
    }
    tail.listeners.add(listener);
    const t = tail;
    return () => {
      t.listeners.delete(listener);
      if (t.listeners.size === 0 && this.tails.get(path) === t) {
        t.close();
        this.tails.delete(path);
      }
    };
  }

  /**
   * Messages to send first: after Last-Event-ID, or the last 20; when that id is gone (or the bus
   * is), the last 20 follow a `resync` event (resync.ts).
   */
  private hydrate(path: string, lastEventId: string | undefined): { messages: BusMessage[]; resync?: MessageEvent } {
    const since = lastEventId?.trim();
    if (!fs.existsSync(path)) return { messages: [], resync: since ? resyncEvent(since, 'last_event_id_not_found') : undefined };
    if (since) {
      try {
        return { messages: readMessages(path, { sinceId: since }) };
      } catch (err) {
        if (!(err instanceof BusError && err.code === 'SINCE_NOT_FOUND')) throw err;
      }
      return { messages: readMessages(path, { last: HYDRATION_COUNT }), resync: resyncEvent(since, 'last_event_id_not_found') };
    }
    return { messages: readMessages(path, { last: HYDRATION_COUNT }) };
  }

  /** #20/#31/#39: hydration, then every new message from the shared tail; `id:` is the msg_id. */
  stream(path: string, lastEventId: string | undefined, signal?: AbortSignal): Observable<MessageEvent> {
    const channel = new SseChannel(signal);
    const sent = new Set<string>();
    let ready = false;
    const pending: BusMessage[] = [];
    const deliver = (messages: BusMessage[]) => {
      for (const m of messages) {
        if (sent.has(m.msg_id)) continue;
        // Only hydrated ids need remembering: the shared tail never repeats a message.
        if (!ready) sent.add(m.msg_id);
        channel.push(busMessageEvent(m));
      }
    };
    const off = this.subscribe(path, (m) => (ready ? deliver(m) : pending.push(...m)));
    channel.onClose(off);
    try {
      const { messages, resync } = this.hydrate(path, lastEventId);
      if (resync) channel.push(resync);
      deliver(messages);
    } catch (err) {
      off();
      throw err;
    }
    ready = true;
    deliver(pending.splice(0));
    return withHeartbeat(channel.asObservable(), this.ctx.sse.heartbeatIntervalMs, this.lifecycle.shutdown$);
  }

  onApplicationShutdown(): void {
    for (const t of this.tails.values()) t.close();
    this.tails.clear();
  }
}
