import { useEffect, useState } from 'react';

/** Current time, refreshed every `everyMs` (drives heartbeat colours and durations). */
export function useClock(everyMs: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  return now;
}
