import { closeSync, fstatSync, openSync, rmSync, statSync } from 'node:fs';
import { flockSync } from './flock';
import { ioError, StorageError } from './storage.errors';

/** Non-blocking flock(2): true when acquired, false when another holder has it. */
export function tryFlock(fd: number, mode: 'ex' | 'sh'): boolean {
  try {
    flockSync(fd, mode === 'ex' ? 'exnb' : 'shnb');
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EAGAIN' || code === 'EWOULDBLOCK') return false;
    throw ioError('flock', err);
  }
}

export function unflock(fd: number): void {
  flockSync(fd, 'un');
}

/**
 * Some process holds a flock on the file at `path` right now: probed without waiting (the probe
 * takes and drops the lock when it is free). A missing file is held by nobody.
 */
export function flockHeldByOther(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return false;
  }
  try {
    if (!tryFlock(fd, 'ex')) return true;
    unflock(fd);
    return false;
  } finally {
    closeSync(fd);
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls a non-blocking flock on `fd` until acquired or `timeoutMs` passes (the event loop keeps
 * running between polls). Throws StorageError('LOCK_TIMEOUT', 'lock timeout').
 */
export async function acquireFlock(fd: number, mode: 'ex' | 'sh', timeoutMs: number, pollMs = 10): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (tryFlock(fd, mode)) return;
    if (Date.now() >= deadline) throw new StorageError('LOCK_TIMEOUT', 'lock timeout');
    await sleep(Math.max(1, Math.min(pollMs, deadline - Date.now())));
  }
}

/**
 * Runs `fn` while holding an exclusive flock on `lockPath` (created 0644 if absent). With
 * `removeAfter`, the lock file is deleted before the lock is released (upstream's run-info lock).
 * Because a holder may delete the file, a lock acquired on an inode that is no longer at
 * `lockPath` is dropped and retried; otherwise two processes could hold "the" lock at once.
 */
export async function withFileLock<T>(
  lockPath: string,
  opts: { timeoutMs: number; pollMs?: number; removeAfter?: boolean; mode?: 'ex' | 'sh' },
  fn: () => T | Promise<T>,
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    let fd: number;
    try {
      fd = openSync(lockPath, 'a+', 0o644);
    } catch (err) {
      throw ioError(`open lock file ${lockPath}`, err);
    }
    try {
      await acquireFlock(fd, opts.mode ?? 'ex', Math.max(0, deadline - Date.now()), opts.pollMs ?? 10);
      if (!isLockOnPath(fd, lockPath)) {
        unflock(fd);
        continue;
      }
      try {
        return await fn();
      } finally {
        if (opts.removeAfter) rmSync(lockPath, { force: true });
        unflock(fd);
      }
    } finally {
      closeSync(fd);
    }
  }
}

/** The open lock `fd` is still the file at `path` (a previous holder may have deleted it). */
export function isLockOnPath(fd: number, path: string): boolean {
  try {
    const a = fstatSync(fd);
    const b = statSync(path);
    return a.ino === b.ino && a.dev === b.dev;
  } catch {
    return false;
  }
}
