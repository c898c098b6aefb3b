import { useEffect, useRef, useState } from 'react';

export type StreamState = 'connecting' | 'open' | 'reconnecting' | 'closed';

export type StreamHandlers = Record<string, (data: string, ev: MessageEvent) => void>;

/**
 * Subscribes to an SSE URL (null = none). Handlers are keyed by event name ('message' = unnamed
 * events). The browser reconnects by itself after network errors; when it gives up (an HTTP
 * error answer) we retry after a pause. `onOpen(fresh, connection)` tells a new connection from a
 * resumed one, and counts the EventSources opened for this URL (1 = the first). Returns the
 * connection state for the UI.
 */
export function useEventSource(url: string | null, handlers: StreamHandlers, onOpen?: (fresh: boolean, connection: number) => void): StreamState {
  const [state, setState] = useState<StreamState>('connecting');
  const handlersRef = useRef(handlers);
  handlersRef.current = handlers;
  const onOpenRef = useRef(onOpen);
  onOpenRef.current = onOpen;
  const names = Object.keys(handlers).sort().join(',');

  useEffect(() => {
    if (!url) {
      setState('closed');
      return;
    }
    let source: EventSource | null = null;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    let connection = 0;
    const connect = () => {
      source = new EventSource(url);
      const number = ++connection;
      // The browser's own reconnects reuse this EventSource and send Last-Event-ID, so the
      // server resumes where it left off; only a new EventSource starts from scratch.
      let fresh = true;
      setState((s) => (s === 'reconnecting' ? s : 'connecting'));
      source.onopen = () => {
        setState('open');
        onOpenRef.current?.(fresh, number);
        fresh = false;
      };
      source.onerror = () => {
        if (stopped || !source) return;
        if (source.readyState === EventSource.CLOSED) {
          source.close();
          setState('reconnecting');
          retry = setTimeout(connect, 3000);
        } else {
          setState('reconnecting');
        }
      };
      for (const name of names.split(',').filter(Boolean)) {
        source.addEventListener(name, (ev) => {
          const e = ev as MessageEvent;
          handlersRef.current[name]?.(typeof e.data === 'string' ? e.data : '', e);
        });
      }
    };
    connect();
    return () => {
      stopped = true;
      clearTimeout(retry);
      source?.close();
      setState('closed');
    };
  }, [url, names]);

  return state;
}

/** Closes are signalled by handlers; this helper lets a handler end its own stream. */
export function closeSource(ev: MessageEvent): void {
  (ev.target as EventSource | null)?.close();
}
