import { join } from 'node:path';
import { ChangeFeed, ensureDir } from '@app/storage';
import { MONITOR_LOCK_FILE, MonitorLock, monitorPass, MonitorPassOptions } from './monitor';

const CHANGE_SETTLE_MS = 250;

export interface MonitorRunOptions extends Omit<MonitorPassOptions, 'inFlight' | 'signal'> {
  /** Time between passes; a change of the TODO file or the project folder wakes a pass sooner. */
  intervalMs: number;
  /** One pass, wait for the jobs it launched, then return (no lock file, no watching). */
  once: boolean;
  /** The change feed that wakes passes (the injected CHANGE_FEED). */
  feed: ChangeFeed;
}

/**
 * `run-agent monitor`: the TODO-driven monitor (monitorPass) once, or as a daemon until SIGINT or
 * SIGTERM: one pass every interval and shortly after file changes, holding the project's monitor
 * lock. Throws when a task failed to start or its run failed.
 */
export async function runMonitor(opts: MonitorRunOptions): Promise<void> {
  const { intervalMs, once, feed, ...passOpts } = opts;
  const inFlight = new Set<string>();
  const abort = new AbortController();
  const pass = () => monitorPass({ ...passOpts, inFlight, signal: abort.signal });

  if (once) {
    const result = await pass();
    const outcomes = await Promise.all(result.launched);
    if (result.failed > 0 || outcomes.includes(false)) throw new Error(`monitor: ${result.failed + outcomes.filter((ok) => !ok).length} task(s) failed to start or run`);
    return;
  }

  const projectDir = opts.layout.projectDir(opts.projectId);
  const lock = new MonitorLock(join(projectDir, MONITOR_LOCK_FILE), opts.probe);
  ensureDir(projectDir);
  lock.acquire(opts.projectId);
  const releaseOnExit = (): void => lock.release();
  process.once('exit', releaseOnExit);
  const stop = (): void => abort.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  let wake: (() => void) | undefined;
  let missed = false; // a change seen while a pass was running
  const poke = (): void => (wake ? wake() : void (missed = true));
  const unwatch = [feed.watch(opts.todoPath, poke), feed.watch(projectDir, poke)];
  const launched: Array<Promise<boolean>> = [];
  let failed = 0;
  try {
    while (!abort.signal.aborted) {
      const result = await pass();
      launched.push(...result.launched);
      failed += result.failed;
      await waitForNextPass(intervalMs, abort.signal, (handler) => {
        wake = handler;
        if (handler && missed) {
          missed = false;
          handler();
        }
      });
    }
    const outcomes = await Promise.all(launched);
    failed += outcomes.filter((ok) => !ok).length;
  } finally {
    unwatch.forEach((u) => u());
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
    lock.release();
    process.removeListener('exit', releaseOnExit);
  }
  if (failed > 0) throw new Error(`monitor: ${failed} task(s) failed to start or run`);
}

/** Resolves after `intervalMs`, on abort, or shortly after a change notification. */
function waitForNextPass(intervalMs: number, signal: AbortSignal, onWake: (handler: (() => void) | undefined) => void): Promise<void> {
  return new Promise<void>((done) => {
    let settled = false;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      onWake(undefined);
      signal.removeEventListener('abort', finish);
      done();
    };
    const timer = setTimeout(finish, intervalMs);
    // Change notifications come in bursts (our own writes cause some too): settle briefly.
    onWake(() => void setTimeout(finish, CHANGE_SETTLE_MS));
    signal.addEventListener('abort', finish, { once: true });
  });
}
