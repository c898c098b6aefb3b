import type { MessageEvent } from '@nestjs/common';
import { Observable, Subscriber } from 'rxjs';

/**
 * A push channel for one SSE connection: events pushed before Nest subscribes are buffered, the
 * teardown runs once when the client leaves (or the stream completes).
 */
export class SseChannel {
  /** `signal` (Nest's @SseSignal) also covers a client that left before Nest subscribed. */
  constructor(signal?: AbortSignal) {
    if (signal?.aborted) queueMicrotask(() => this.close());
    else signal?.addEventListener('abort', () => this.close(), { once: true });
  }

  private buffer: MessageEvent[] = [];
  private subscriber?: Subscriber<MessageEvent>;
  private completed = false;
  private closed = false;
  private readonly teardowns: (() => void)[] = [];

  push(event: MessageEvent): void {
    if (this.closed) return;
    if (this.subscriber) this.subscriber.next(event);
    else this.buffer.push(event);
  }

  complete(): void {
    this.completed = true;
    this.subscriber?.complete();
  }

  onClose(fn: () => void): void {
    if (this.closed) fn();
    else this.teardowns.push(fn);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const fn of this.teardowns.splice(0)) {
      try {
        fn();
      } catch {
        // teardown must not throw into rxjs
      }
    }
  }

  asObservable(): Observable<MessageEvent> {
    return new Observable<MessageEvent>((sub) => {
      this.subscriber = sub;
      for (const e of this.buffer.splice(0)) sub.next(e);
      if (this.completed) sub.complete();
      return () => this.close();
    });
  }
}
