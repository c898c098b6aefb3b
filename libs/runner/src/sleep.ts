/** A sleep that ends early (resolving false) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, Math.max(0, ms));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `task` every `everyMs` without overlapping itself (a tick is skipped while the previous run
 * is still going; its errors are ignored). Returns the function that stops it.
 */
export function everyWithoutOverlap(task: () => Promise<unknown>, everyMs: number, opts: { unref?: boolean } = {}): () => void {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    task()
      .catch(() => undefined)
      .finally(() => (busy = false));
  }, everyMs);
  if (opts.unref) timer.unref();
  return () => clearInterval(timer);
}
