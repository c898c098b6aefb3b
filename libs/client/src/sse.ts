export interface SseEvent {
  event: string;
  id?: string;
  data: string;
}

/**
 * Reads an SSE response body and calls onEvent per event. Resolves `true` when onEvent returned
 * true (the caller saw its terminal event), `false` when the stream ended without one.
 */
export async function readSse(res: Response, onEvent: (ev: SseEvent) => boolean | void): Promise<boolean> {
  if (!res.body) return false;
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let id: string | undefined;
  let data: string[] = [];
  let hasData = false;
  const dispatch = (): boolean => {
    const ev = { event: event || 'message', id, data: data.join('\n') };
    const had = hasData || event !== '';
    event = '';
    id = undefined;
    data = [];
    hasData = false;
    return had ? onEvent(ev) === true : false;
  };
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, '');
        buffer = buffer.slice(nl + 1);
        if (line === '') {
          if (dispatch()) return true;
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'event') event = value;
        else if (field === 'id') id = value;
        else if (field === 'data') {
          data.push(value);
          hasData = true;
        }
      }
    }
  } finally {
    reader.releaseLock();
    await res.body.cancel().catch(() => undefined);
  }
  return false;
}

/** Reconnect delays of follow modes: 2 s doubling to 30 s (upstream), overridable for tests. */
export function reconnectDelays(env: NodeJS.ProcessEnv = process.env): { first: number; max: number } {
  const first = Number(env.CONDUCTOR_CLIENT_RETRY_MS);
  return Number.isFinite(first) && first > 0 ? { first, max: first * 15 } : { first: 2000, max: 30_000 };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
