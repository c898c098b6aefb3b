import { get } from 'node:http';

const PROBE_TIMEOUT_MS = 5000;

/**
 * Probes `<base>/healthz` every interval (5 s timeout per probe); after `maxFailures` consecutive
 * failures calls onGiveUp once. Returns a function that stops the watchdog.
 */
export function startWatchdog(opts: {
  healthUrl: string;
  intervalMs: number;
  maxFailures: number;
  probeTimeoutMs?: number;
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
      const status = await statusOf(opts.healthUrl, opts.probeTimeoutMs ?? PROBE_TIMEOUT_MS);
      if (status !== 200) reason = `status ${status}`;
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

/**
 * The status of one GET of `url`, its body read and dropped. node:http, which the server has
 * loaded anyway: the first call of Node's fetch() loads undici, ~18 MB of an idle server's memory.
 */
function statusOf(url: string, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = get(url, { timeout: timeoutMs }, (res) => {
      res.once('error', reject);
      res.once('close', () => (res.complete ? resolve(res.statusCode ?? 0) : reject(new Error('the connection closed before the answer was complete'))));
      res.resume();
    });
    req.once('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.once('error', reject);
  });
}
