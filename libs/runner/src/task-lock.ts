import { closeSync, ftruncateSync, futimesSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isLockOnPath, tryFlock, unflock, withFenceExclusive, type LivenessProbe } from '@app/storage';
import { RunnerError } from './runner.errors';
import { sleep } from './sleep';

export const TASK_LOCK_FILE = 'TASK.lock';
const LOCK_POLL_MS = 20;
export const DEFAULT_TASK_LEASE_MS = 30_000;
const LEASE_ENV = 'CONDUCTOR_TASK_LEASE_MS';

function lockHolderPid(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The loop's lease (issue #31): the holder of TASK.lock renews it every lease/3 (it touches the
 * file); a claimant that may take over (`--adopt`) treats a holder that renewed nothing for one
 * lease as unresponsive. $CONDUCTOR_TASK_LEASE_MS, default 30 s; a bad value is refused.
 */
export function taskLeaseMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[LEASE_ENV];
  if (raw === undefined || raw === '') return DEFAULT_TASK_LEASE_MS;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 100) {
    throw new RunnerError('INVALID_INPUT', `invalid ${LEASE_ENV} ${JSON.stringify(raw)}: must be a whole number of milliseconds, at least 100`);
  }
  return Number(raw);
}

/**
 * Whether a Ralph loop of the task is running, for readers that must not touch the lock (a watch
 * polling it would make a loop starting at that instant fail): the holder's pid, written when it
 * took the lock and cleared on release, is a live process.
 */
export function isTaskLoopAlive(taskDir: string, probe: LivenessProbe): boolean {
  const pid = lockHolderPid(join(taskDir, TASK_LOCK_FILE));
  return pid !== undefined && probe.isPidAlive(pid);
}

export interface TaskLock {
  release(): void;
  /** The previous holder was unresponsive for a whole lease and its lock was broken. */
  tookOver: boolean;
}

interface LeaseSeen {
  ino: bigint;
  ctimeNs: bigint;
  /** Monotonic time of the last change seen: wall-clock jumps do not move it (faketime case). */
  since: number;
}

function leaseStamp(path: string): { ino: bigint; ctimeNs: bigint } | undefined {
  const st = statSync(path, { bigint: true, throwIfNoEntry: false });
  return st ? { ino: st.ino, ctimeNs: st.ctimeNs } : undefined;
}

/**
 * Watches the holder's renewals on the claimant's own monotonic clock: stale when the lock file
 * (inode and ctime, which the kernel sets, not a faked clock) did not change for a whole lease.
 */
function leaseExpired(path: string, seen: LeaseSeen | undefined, leaseMs: number): { seen: LeaseSeen | undefined; expired: boolean } {
  const now = performance.now();
  const stamp = leaseStamp(path);
  if (!stamp) return { seen: undefined, expired: false };
  if (!seen || seen.ino !== stamp.ino || seen.ctimeNs !== stamp.ctimeNs) return { seen: { ...stamp, since: now }, expired: false };
  return { seen, expired: now - seen.since >= leaseMs };
}

/** Removes the unresponsive holder's lock file, if it is still the one watched (under the fence lock: one taker). */
function breakLock(taskDir: string, path: string, seen: LeaseSeen): boolean {
  return withFenceExclusive(taskDir, () => {
    const stamp = leaseStamp(path);
    if (!stamp || stamp.ino !== seen.ino || stamp.ctimeNs !== seen.ctimeNs) return false;
    unlinkSync(path);
    return true;
  });
}

/**
 * One Ralph loop per task: an exclusive flock on <task>/TASK.lock, held until release() is called;
 * another holder makes it fail (after polling up to `waitMs`). The kernel drops the lock when the
 * holder dies, so a crashed loop never blocks the next one. Node opens files close-on-exec, so
 * agents do not inherit it. The holder renews its lease (touches the file every lease/3); with
 * `takeover`, a holder that renewed nothing for one lease (stopped, hung) loses the lock: its file
 * is removed and a new one locked. The old holder is then fenced by the epoch the caller claims.
 */
export async function lockTask(
  taskDir: string,
  projectId: string,
  taskId: string,
  waitMs: number,
  opts: { takeover?: boolean; leaseMs?: number } = {},
): Promise<TaskLock> {
  const path = join(taskDir, TASK_LOCK_FILE);
  const leaseMs = opts.leaseMs ?? DEFAULT_TASK_LEASE_MS;
  const deadline = Date.now() + (opts.takeover ? Math.max(waitMs, Math.ceil(leaseMs * 1.5) + 1000) : waitMs);
  let seen: LeaseSeen | undefined;
  let tookOver = false;
  for (;;) {
    const fd = openSync(path, 'a+', 0o644);
    let acquired: boolean;
    try {
      acquired = tryFlock(fd, 'ex');
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    if (!acquired) {
      closeSync(fd);
      if (opts.takeover) {
        const lease = leaseExpired(path, seen, leaseMs);
        seen = lease.seen;
        if (lease.expired && seen && breakLock(taskDir, path, seen)) {
          tookOver = true;
          seen = undefined;
          continue;
        }
      }
      if (Date.now() < deadline) {
        await sleep(Math.min(LOCK_POLL_MS, deadline - Date.now()));
        continue;
      }
      const pid = lockHolderPid(path);
      throw new RunnerError(
        'TASK_LOCKED',
        `task ${taskId} is already running (its Ralph loop is held by another process${pid ? `, pid ${pid}` : ''}` +
          `${opts.takeover ? ', which keeps renewing its lease' : ''}); ` +
          `stop it with \`run-agent stop --project ${projectId} --task ${taskId}\` or wait`,
      );
    }
    // the task folder was deleted and recreated meanwhile: lock the file that is there now
    if (!isLockOnPath(fd, path)) {
      closeSync(fd);
      continue;
    }
    ftruncateSync(fd, 0);
    writeSync(fd, `${process.pid}\n`);
    const renew = setInterval(() => {
      const now = new Date();
      try {
        futimesSync(fd, now, now);
      } catch {
        // released meanwhile
      }
    }, Math.max(10, Math.floor(leaseMs / 3)));
    renew.unref();
    let held = true;
    return {
      tookOver,
      release: () => {
        if (!held) return;
        held = false;
        clearInterval(renew);
        ftruncateSync(fd, 0);
        unflock(fd);
        closeSync(fd);
      },
    };
  }
}
