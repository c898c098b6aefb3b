/**
 * The one polling helper of the suite: waits for an event (a condition becoming true), never for
 * a fixed time. Deadlines are generous on purpose (a loaded 2-core CI machine); a test that waits
 * its whole deadline is broken, not slow.
 */
export interface WaitOptions {
  /** Give up after this long (default 30 s). */
  timeoutMs?: number;
  /** Poll interval (default 25 ms). */
  intervalMs?: number;
}

export const DEFAULT_WAIT_MS = 30_000;

type Probe<T> = () => T | undefined | null | false | Promise<T | undefined | null | false>;

/**
 * Polls `probe` until it returns a value other than undefined/null/false and resolves with it.
 * A probe that throws counts as "not yet" (files half-written, a server not yet listening); the
 * last error is reported when the deadline passes. `what` names the condition in that message.
 */
export function waitFor<T>(what: string, probe: Probe<T>, opts?: number | WaitOptions): Promise<T>;
export function waitFor<T>(probe: Probe<T>, opts?: number | WaitOptions): Promise<T>;
export async function waitFor<T>(a: string | Probe<T>, b?: Probe<T> | number | WaitOptions, c?: number | WaitOptions): Promise<T> {
  const what = typeof a === 'string' ? a : 'condition';
  const probe = (typeof a === 'string' ? b : a) as Probe<T>;
  const raw = typeof a === 'string' ? c : (b as number | WaitOptions | undefined);
  const opts: WaitOptions = typeof raw === 'number' ? { timeoutMs: raw } : (raw ?? {});
  const deadline = Date.now() + (opts.timeoutMs ?? DEFAULT_WAIT_MS);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const detail = lastError ? ` (last error: ${(lastError as Error).message ?? String(lastError)})` : '';
      throw new Error(`timed out after ${opts.timeoutMs ?? DEFAULT_WAIT_MS} ms waiting for ${what}${detail}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 25));
  }
}

/** Resolves when `child` has exited (at once if it already has), with its exit code. */
export function exitOf(child: { exitCode: number | null; signalCode: NodeJS.Signals | null; once(event: 'exit', cb: (code: number | null) => void): unknown }): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}
