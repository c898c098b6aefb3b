import { useCallback, useEffect, useRef, useState } from 'react';

export interface PollState<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * Calls `load` now and every `intervalMs` (skipping ticks while the tab is hidden or a call is in
 * flight). `key` identifies the resource: when it changes the old data is dropped.
 */
export function usePoll<T>(key: string | null, load: () => Promise<T>, intervalMs: number): PollState<T> {
  const [state, setState] = useState<{ key: string | null; data?: T; error?: unknown; loading: boolean }>({ key, loading: key !== null });
  const loadRef = useRef(load);
  loadRef.current = load;
  const inFlight = useRef(false);
  const [tick, setTick] = useState(0);

  const run = useCallback(
    (force: boolean) => {
      if (key === null || (inFlight.current && !force)) return;
      inFlight.current = true;
      loadRef.current().then(
        (data) => {
          inFlight.current = false;
          // A late answer for a previous key is dropped.
          setState((s) => (s.key === key ? { key, data, loading: false } : s));
        },
        (error: unknown) => {
          inFlight.current = false;
          setState((s) => (s.key === key ? { key, data: s.data, error, loading: false } : s));
        },
      );
    },
    [key],
  );

  useEffect(() => {
    setState((s) => (s.key === key ? s : { key, loading: key !== null }));
    inFlight.current = false;
    run(true);
    if (key === null || intervalMs <= 0) return;
    const timer = setInterval(() => {
      if (typeof document === 'undefined' || document.visibilityState !== 'hidden') run(false);
    }, intervalMs);
    return () => clearInterval(timer);
  }, [key, intervalMs, run, tick]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  const sameKey = state.key === key;
  return { data: sameKey ? state.data : undefined, error: sameKey ? state.error : undefined, loading: sameKey ? state.loading : true, reload };
}
