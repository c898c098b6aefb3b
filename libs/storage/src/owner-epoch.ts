import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-write';
import { tryFlock, unflock } from './file-lock';
import { readRecordText } from './safe-read';
import { StorageError } from './storage.errors';

/**
 * Fencing epochs (issue #31). Every task has a current owner epoch, a small durable record in its
 * folder (OWNER-EPOCH: `epoch: N`, `claimed_by: loop|resume|adopt|takeover|job`, `pid`, `claimed_at`),
 * written atomically and fsync'd. A loop, a resume, an adoption, a takeover or a standalone root
 * job (`run-agent job` outside a loop) claims the task by
 * incrementing it (claimOwnerEpoch, under the task lock). The claimant's OwnerFence is its proof:
 * the writers of run-info, of the runner's bus records and the DONE / restart decisions run their
 * write inside fence.guard(), which refuses with StaleEpochError once a newer claim exists.
 *
 * Check and write are atomic with respect to a claim: a guarded write holds a shared flock on
 * OWNER-EPOCH.lock from the epoch read to the end of its write, and a claim takes it exclusively,
 * so no write that checked the old epoch can land after the new epoch is on disk. A holder stopped
 * (SIGSTOP) inside a guarded write makes a claim wait, then fail (CLAIM_BLOCKED): never two owners.
 */
export const OWNER_EPOCH_FILE = 'OWNER-EPOCH';
export const OWNER_EPOCH_LOCK_FILE = 'OWNER-EPOCH.lock';

export type ClaimKind = 'loop' | 'resume' | 'adopt' | 'takeover' | 'job';

/** How long a claim (exclusive) or a guarded write (shared) waits for the fence lock. */
const FENCE_LOCK_WAIT_MS = 5000;
const FENCE_LOCK_POLL_MS = 5;

/** The typed refusal of a writer whose epoch is older than the task's current one. */
export class StaleEpochError extends StorageError {
  constructor(
    readonly taskDir: string,
    readonly epoch: number,
    readonly current: number,
  ) {
    super('STALE_EPOCH', `stale owner: this process holds epoch ${epoch} of task folder ${taskDir}, but the task was claimed since (epoch ${current}); writing nothing more`);
  }
}

export function isStaleEpoch(err: unknown): err is StaleEpochError {
  for (let e = err as { cause?: unknown } | undefined, depth = 0; e && depth < 8; e = e.cause as typeof e, depth++) {
    if (e instanceof StaleEpochError) return true;
  }
  return false;
}

/** The task's current epoch; 0 when never claimed (a folder written by upstream or an older build). */
export function readOwnerEpoch(taskDir: string): number {
  let text: string;
  try {
    text = readRecordText(join(taskDir, OWNER_EPOCH_FILE));
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ENOENT' || code === 'NOT_FOUND') return 0;
    throw err;
  }
  const m = /^epoch: (\d{1,15})$/m.exec(text);
  if (!m) throw new StorageError('CORRUPT', `owner epoch record ${join(taskDir, OWNER_EPOCH_FILE)} has no "epoch: <n>" line`);
  return Number(m[1]);
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** Takes the fence lock in `mode`, polling (synchronously: the critical sections are a read and one write). */
function lockFence(fd: number, mode: 'ex' | 'sh', taskDir: string): void {
  const deadline = Date.now() + FENCE_LOCK_WAIT_MS;
  while (!tryFlock(fd, mode)) {
    if (Date.now() >= deadline) {
      throw new StorageError(
        'CLAIM_BLOCKED',
        `the owner epoch of task folder ${taskDir} stayed locked for ${FENCE_LOCK_WAIT_MS} ms (its holder may be stopped inside a write); try again`,
      );
    }
    Atomics.wait(pause, 0, 0, FENCE_LOCK_POLL_MS);
  }
}

function openFenceLock(taskDir: string): number {
  return openSync(join(taskDir, OWNER_EPOCH_LOCK_FILE), 'a+', 0o644);
}

/**
 * A claim's proof of ownership: its epoch and an open descriptor of the fence lock. Writers run
 * their write through guard(); close() when the owner is done.
 */
export class OwnerFence {
  private fd: number | undefined;
  /** Guards of this fence in progress (one flock per descriptor: nested guards share it). */
  private holders = 0;

  constructor(
    readonly taskDir: string,
    readonly epoch: number,
  ) {
    this.fd = openFenceLock(taskDir);
  }

  /** Runs `write` under the shared fence lock, after checking this epoch is still the task's. */
  guard<T>(write: () => T): T {
    const fd = this.enter();
    try {
      return write();
    } finally {
      this.leave(fd);
    }
  }

  /** guard() for an asynchronous write (the lock is held until it settles). */
  async guardAsync<T>(write: () => Promise<T>): Promise<T> {
    const fd = this.enter();
    try {
      return await write();
    } finally {
      this.leave(fd);
    }
  }

  /** A decision point (DONE, restart, signal): throws StaleEpochError when a newer claim exists. */
  check(): void {
    this.guard(() => undefined);
  }

  /** check() as a boolean, for paths that must stay silent (timers that would signal an agent). */
  isCurrent(): boolean {
    try {
      this.check();
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Non-blocking entry for the bus writer (it polls its own lock the same way): the held fd, or
   * undefined while a claim holds the lock. Throws StaleEpochError. Release with leave().
   */
  tryEnter(): number | undefined {
    const fd = this.openFd();
    if (this.holders === 0 && !tryFlock(fd, 'sh')) return undefined;
    return this.verified(fd);
  }

  leave(fd: number): void {
    if (--this.holders === 0) unflock(fd);
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }

  private enter(): number {
    const fd = this.openFd();
    if (this.holders === 0) lockFence(fd, 'sh', this.taskDir);
    return this.verified(fd);
  }

  /** Under the shared lock (taken by this call or held by an enclosing guard of this fence). */
  private verified(fd: number): number {
    let current: number;
    try {
      current = readOwnerEpoch(this.taskDir);
    } catch (err) {
      if (this.holders === 0) unflock(fd);
      throw err;
    }
    if (current !== this.epoch) {
      if (this.holders === 0) unflock(fd);
      throw new StaleEpochError(this.taskDir, this.epoch, current);
    }
    this.holders++;
    return fd;
  }

  private openFd(): number {
    if (this.fd === undefined) this.fd = openFenceLock(this.taskDir);
    return this.fd;
  }
}

/**
 * Claims the task: current epoch + 1, written atomically and fsync'd under the exclusive fence
 * lock (the caller holds the task lock). `beforeWrite` runs inside the lock, before the new epoch
 * is written (a takeover breaks the old task lock there). Returns the new owner's fence.
 */
export function claimOwnerEpoch(taskDir: string, by: ClaimKind, beforeWrite?: () => void): OwnerFence {
  const fd = openFenceLock(taskDir);
  try {
    lockFence(fd, 'ex', taskDir);
    try {
      beforeWrite?.();
      const epoch = readOwnerEpoch(taskDir) + 1;
      const record = `epoch: ${epoch}\nclaimed_by: ${by}\npid: ${process.pid}\nclaimed_at: ${new Date().toISOString()}\n`;
      writeFileAtomic(join(taskDir, OWNER_EPOCH_FILE), record);
      return new OwnerFence(taskDir, epoch);
    } finally {
      unflock(fd);
    }
  } finally {
    closeSync(fd);
  }
}

/** Runs `fn` under the exclusive fence lock without claiming (a takeover's check of the old lock). */
export function withFenceExclusive<T>(taskDir: string, fn: () => T): T {
  const fd = openFenceLock(taskDir);
  try {
    lockFence(fd, 'ex', taskDir);
    try {
      return fn();
    } finally {
      unflock(fd);
    }
  } finally {
    closeSync(fd);
  }
}
