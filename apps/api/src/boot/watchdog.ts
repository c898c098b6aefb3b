/**
 * Probes `<base>/healthz` every interval (5 s timeout per probe); after `maxFailures` consecutive
 * failures calls onGiveUp once. Returns a function that stops the watchdog.
 */
export function startWatchdog(opts: {
  healthUrl: string;
  intervalMs: number;
  maxFailures: number;
  onFailure?: (count: number, reason: string) => void;
  onGiveUp: (reason: string) => void;
}): () => void {
  if (opts.intervalMs <= 0 || opts.maxFailures <= 0) return () => undefined;
  let failures = 0;
  let stopped = false;
  let probing = false;
  const probe = async () => {
    if (probing || stopped) return;
    probing = true;
    let reason = '';
    try {
      const res = await fetch(opts.healthUrl, { signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer().catch(() => undefined);
      if (res.status !== 200) reason = `status ${res.status}`;
    } catch (err) {
      reason = (err as Error).message;
    }
    probing = false;
    if (stopped) return;
    if (!reason) {
      failures = 0;
      return;
    }
    failures++;
    opts.onFailure?.(failures, reason);
    if (failures >= opts.maxFailures) {
      stop();
      opts.onGiveUp(`${failures} consecutive health check failures (last: ${reason})`);
    }
  };
  const timer = setInterval(() => void probe(), opts.intervalMs);
  timer.unref();
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  return stop;
}
