import type { MessageEvent } from '@nestjs/common';
import { sseEvent } from './sse-event';

/**
 * Drop-and-resync rule for SSE clients that do not keep up (#15). Each event is written to every
 * client's socket once (apps/api/src/sse/send-sse.ts); a client that stops reading leaves bytes queued in its
 * response. When, at the start of an event-loop turn that has events for it, more than
 * SSE_MAX_PENDING_CHARS bytes from earlier turns are still unread, the client is dropped (the
 * connection closed, a warning with the reason logged). Memory per client is therefore bounded by
 * this limit plus one turn's events plus the socket buffers, whatever the client does. The run
 * and log streams (at most api.sse.max_clients_per_run clients per run) stay on NestJS's @Sse,
 * whose own queue gets the same limit (SSE_OPTIONS in apps/api/src/sse/slow-clients.ts).
 *
 * Resync: an EventSource reconnects with the id of the last event it received, and every stream
 * resumes after it (bus streams by msg_id, log streams by byte offset, fan-in by run cursor). When
 * that id is gone from a bus, the stream starts with a `resync` event (RESYNC_EVENT) before the
 * last messages, so the client knows it may have missed some and re-lists them.
 */
export const SSE_MAX_PENDING_CHARS = 256 * 1024;

export const RESYNC_EVENT = 'resync';

/** `resync`: the stream could not resume after `lastEventId`; what follows is a fresh start. */
export function resyncEvent(lastEventId: string, reason: 'last_event_id_not_found'): MessageEvent {
  return sseEvent(RESYNC_EVENT, { reason, last_event_id: lastEventId });
}
