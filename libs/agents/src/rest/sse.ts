/** Raised when a stream delivers no bytes for longer than the idle timeout. */
export class SseIdleTimeoutError extends Error {
  constructor(readonly idleMs: number) {
    super(`no stream data for ${idleMs} ms`);
  }
}

export interface SseReadOptions {
  /** Abort the stream when no bytes arrive for this long (0 = never). */
  idleTimeoutMs?: number;
  /** Aborted on idle timeout; it must be the controller whose signal the body belongs to. */
  controller?: AbortController;
}

/**
 * Yields the `data` payload of each server-sent event: `data:` lines (payload trimmed) are
 * collected until a blank line and joined with newlines; comments and other fields are ignored;
 * a pending event at end of stream is still delivered.
 */
export async function* sseDataEvents(body: ReadableStream<Uint8Array>, opts: SseReadOptions = {}): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const idleMs = opts.idleTimeoutMs ?? 0;
  let idle = false;
  let timer: NodeJS.Timeout | undefined;
  const armIdle = () => {
    if (idleMs <= 0) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      idle = true;
      opts.controller?.abort(new SseIdleTimeoutError(idleMs));
      void reader.cancel().catch(() => undefined);
    }, idleMs);
  };

  let pending = '';
  let data: string[] = [];
  try {
    armIdle();
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (err) {
        if (idle) throw new SseIdleTimeoutError(idleMs);
        throw err;
      }
      if (idle) throw new SseIdleTimeoutError(idleMs);
      if (chunk.done) break;
      armIdle();
      pending += decoder.decode(chunk.value, { stream: true });
      let nl: number;
      while ((nl = pending.indexOf('\n')) !== -1) {
        const line = pending.slice(0, nl).replace(/\r$/, '');
        pending = pending.slice(nl + 1);
        if (line === '') {
          if (data.length > 0) yield data.join('\n');
          data = [];
        } else if (line.startsWith('data:')) {
          data.push(line.slice(5).trim());
        }
      }
    }
    pending += decoder.decode();
    const last = pending.replace(/\r$/, '');
    if (last.startsWith('data:')) data.push(last.slice(5).trim());
    if (data.length > 0) yield data.join('\n');
  } finally {
    clearTimeout(timer);
    // Also closes the connection when the consumer stops early (e.g. at [DONE]).
    void reader.cancel().catch(() => undefined);
  }
}
