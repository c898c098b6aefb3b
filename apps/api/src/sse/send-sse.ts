import { Logger, type MessageEvent } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Observable, Subscription } from 'rxjs';
import { SSE_MAX_PENDING_CHARS } from '@app/streams';

const frames = new WeakMap<object, string>();
const oneLine = (v: unknown) => String(v).replace(/[\r\n]/g, '');
const logger = new Logger('sse');

/** Event-loop turns that wrote SSE events, counted by one shared setImmediate (not one per client). */
let turn = 0;
let turnEnds = false;
function currentTurn(): number {
  if (!turnEnds) {
    turnEnds = true;
    setImmediate(() => {
      turn++;
      turnEnds = false;
    });
  }
  return turn;
}

/**
 * The SSE text of an event, built once per event object: a bus message shared by every stream of
 * its bus (busMessageEvent) is framed once, however many clients receive it.
 */
export function sseFrame(e: MessageEvent): string {
  let text = frames.get(e);
  if (text === undefined) {
    text = e.type ? `event: ${oneLine(e.type)}\n` : '';
    if (e.id !== undefined && e.id !== null) text += `id: ${oneLine(e.id)}\n`;
    if (e.retry !== undefined && e.retry !== null) text += `retry: ${oneLine(e.retry)}\n`;
    const data = typeof e.data === 'string' ? e.data : JSON.stringify(e.data);
    for (const line of data.split(/\r\n|\r|\n/)) text += `data: ${line}\n`;
    text += '\n';
    frames.set(e, text);
  }
  return text;
}

/**
 * Serves an SSE stream straight on the socket (#15). NestJS's @Sse path costs a promise, an rxjs
 * queue, a Transform stream and a re-framing per event per client; with 500 clients at 100
 * events/s that saturated the event loop (docs/decisions.md, "SSE fan-out"). Here each event is one
 * write of its pre-framed text. `open` builds the stream (it may throw an HTTP error: nothing has
 * been sent yet, the exception filter answers); its signal aborts when the client leaves.
 * Slow clients: the drop rule of @app/streams (resync.ts), on the response's own buffer.
 */
export function sendSse(req: FastifyRequest, reply: FastifyReply, open: (signal: AbortSignal) => Observable<MessageEvent>): void {
  const left = new AbortController();
  const events = open(left.signal);
  const res = reply.raw;
  reply.hijack();
  const socket = req.raw.socket;
  socket.setKeepAlive(true);
  socket.setNoDelay(true);
  socket.setTimeout(0);
  res.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string | string[]>),
    'content-type': 'text/event-stream',
    connection: 'keep-alive',
    'cache-control': 'private, no-cache, no-store, must-revalidate, max-age=0, no-transform',
    'x-accel-buffering': 'no',
  });
  if (req.method === 'HEAD') {
    // headers only; the stream's resources go with the signal
    left.abort();
    res.end();
    return;
  }
  res.write('\n');
  // set once subscribe() returns; finish() may run inside it (a stream that completes at once)
  const held: { sub?: Subscription } = {};
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    left.abort();
    held.sub?.unsubscribe();
  };
  res.once('close', finish);
  let turnSeen = -1;
  let unreadAtTurnStart = 0;
  held.sub = events.subscribe({
    next: (e) => {
      if (done) return;
      // What the client left unread from earlier turns: a burst written in this turn (a tail
      // batch, one large message) does not count against it.
      const now = currentTurn();
      if (turnSeen !== now) {
        turnSeen = now;
        unreadAtTurnStart = res.writableLength;
      }
      if (unreadAtTurnStart > SSE_MAX_PENDING_CHARS) {
        logger.warn(`dropping an SSE client of ${req.url}: it is not reading its events (${unreadAtTurnStart} bytes unread, limit ${SSE_MAX_PENDING_CHARS})`);
        finish();
        res.destroy();
        return;
      }
      res.write(sseFrame(e));
    },
    complete: () => {
      finish();
      res.end();
    },
    error: (err: unknown) => {
      logger.error(err);
      if (!done) res.write('event: error\ndata: Internal server error\n\n');
      finish();
      res.end();
    },
  });
  if (done) held.sub.unsubscribe();
}
