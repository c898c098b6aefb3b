import type { MessageEvent, Sse } from '@nestjs/common';
import { sseEvent } from './sse-event';

/**
 * Drop-and-resync rule for SSE clients that do not keep up (#15). Every stream event is built
 * once and written to each client's socket; a client that stops reading first fills its socket
 * buffers, then its events wait in NestJS's per-connection queue. Once more than
 * SSE_MAX_PENDING_CHARS characters of events wait for one client, NestJS drops that connection
 * and logs "The client is not reading its events" (the reason). Memory per client is bounded by
 * this limit plus the socket buffers, whatever the client does.
 *
 * Resync: an EventSource reconnects with the id of the last event it received, and every stream
 * resumes after it (bus streams by msg_id, log streams by byte offset, fan-in by run cursor). When
 * that id is gone from a bus, the stream starts with a `resync` event (RESYNC_EVENT) before the
 * last messages, so the client knows it may have missed some and re-lists them.
 */
export const SSE_MAX_PENDING_CHARS = 256 * 1024;

/** Options of every @Sse route. */
export const SSE_OPTIONS: Parameters<typeof Sse>[1] = { maxPendingDataLength: SSE_MAX_PENDING_CHARS };

export const RESYNC_EVENT = 'resync';

/** `resync`: the stream could not resume after `lastEventId`; what follows is a fresh start. */
export function resyncEvent(lastEventId: string, reason: 'last_event_id_not_found'): MessageEvent {
  return sseEvent(RESYNC_EVENT, { reason, last_event_id: lastEventId });
}
