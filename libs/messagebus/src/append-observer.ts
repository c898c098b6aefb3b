import type { BusMessage } from './types';

/** Called after messages were appended by a BusWriter of this process (path as given to the writer). */
export type AppendListener = (path: string, messages: BusMessage[]) => void;

const listeners = new Set<AppendListener>();

/**
 * Observes every append made by this process's BusWriters (whatever the caller: API, task loops,
 * completion propagation), e.g. for metrics. Returns the unsubscribe function. A listener that
 * throws does not affect the append or the other listeners.
 */
export function onBusAppend(listener: AppendListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function notifyAppended(path: string, messages: BusMessage[]): void {
  for (const l of [...listeners]) {
    try {
      l(path, messages);
    } catch {
      // observers never break a write
    }
  }
}
