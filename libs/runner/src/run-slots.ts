import { closeSync, constants, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { acquireFlock, flockHeldByOther, isLockOnPath, StorageError, tryFlock, unflock } from '@app/storage';
import { RunnerError } from './runner.errors';
import { sleep } from './sleep';

export interface RunSlot {
  index: number;
  /** The place in the queue this run was granted with (pass it back as `ticket` to re-queue there); undefined when unlimited. */
  ticket?: number;
  release(): void;
}

export interface AcquireOptions {
  root: string;
  limit: number;
  runId: string;
  pollMs?: number;
  signal?: AbortSignal;
  /** Queue at this place instead of the end: the ticket of an earlier grant (a loop back from a rate-limit wait). */
  ticket?: number;
  /**
   * The folder of this queue (slots/, queue/, queue.seq); default `<root>/.conductor` (max_concurrent_runs).
   * The fan-out governor queues a parent's children in their own folder (issue #33).
   */
  queueBase?: string;
  /** Continue from this turn (a ticket drawn and a queue place taken by an earlier takeTurn). */
  state?: TurnState;
  /** Called once when the run has to wait (it joined the queue). */
  onQueued?(): Promise<void>;
}

export function slotsDir(root: string): string {
  return join(root, '.conductor', 'slots');
}

export function queueDir(root: string): string {
  return join(root, '.conductor', 'queue');
}

/** The folder holding a queue's slots/, queue/ and queue.seq. */
const baseOf = (opts: Pick<AcquireOptions, 'root' | 'queueBase'>): string => opts.queueBase ?? join(opts.root, '.conductor');
const ticketFile = (base: string) => join(base, 'queue.seq');
const QUEUE_LOCK_TIMEOUT_MS = 10_000;
const TICKET_DIGITS = 20;

const UNLIMITED: RunSlot = { index: -1, release: () => undefined };

/**
 * max_concurrent_runs across every process sharing the runs root (D13): N lock files
 * `<root>/.conductor/slots/slot-<i>.lock`, one held with flock per running agent. The kernel drops
 * the lock when the holder dies, so a crashed runner never leaks a slot.
 *
 * Strict FIFO (issue #18): every acquisition draws a ticket from `<root>/.conductor/queue.seq`
 * under that file's flock; a run takes a free slot only when no live waiter holds an older ticket.
 * A waiting run leaves `<root>/.conductor/queue/<run_id>` (`<pid>\nticket: <n>\n`), flocked by its
 * process while it waits: a marker nobody holds belongs to a dead waiter and is removed, so a
 * crash never blocks the queue. All queue decisions are taken under the flock of `queue.seq`.
 */
export async function acquireRunSlot(opts: AcquireOptions): Promise<RunSlot> {
  if (!(opts.limit > 0)) return UNLIMITED;
  const state: TurnState = opts.state ?? { ticket: opts.ticket };
  try {
    for (;;) {
      if (opts.signal?.aborted) throw new RunnerError('STOPPED', 'acquire run slot: cancelled while queued');
      const joined = !!state.waiter;
      const slot = await takeTurn(opts, state);
      if (slot) return slot;
      if (!joined && state.waiter) await opts.onQueued?.();
      if (!(await sleep(opts.pollMs ?? 50, opts.signal))) {
        throw new RunnerError('STOPPED', 'acquire run slot: cancelled while queued');
      }
    }
  } finally {
    if (state.waiter) leaveQueue(state.waiter);
  }
}

interface Waiter {
  path: string;
  fd: number;
}

export interface TurnState {
  ticket?: number;
  waiter?: Waiter;
}

/**
 * One look at the queue (exported for deterministic tests): draws a ticket if `state` has none;
 * grants a free slot when no live waiter is older, else joins the queue (once). Undefined = wait.
 */
export async function takeTurn(opts: Pick<AcquireOptions, 'root' | 'limit' | 'runId' | 'queueBase'>, state: TurnState): Promise<RunSlot | undefined> {
  const base = baseOf(opts);
  const lock = await lockQueue(base);
  if (lock === undefined) return undefined;
  try {
    // under the lock: an idle queue's folder may have been pruned (pruneIdleQueue) before it
    mkdirSync(join(base, 'slots'), { recursive: true });
    mkdirSync(join(base, 'queue'), { recursive: true });
    const waiting = liveWaiters(base, opts.runId);
    const ticket = (state.ticket ??= nextTicket(lock, waiting));
    const slot = waiting.some((t) => t < ticket) ? undefined : tryAcquireAny(base, opts.limit);
    if (!slot) {
      state.waiter ??= joinQueue(base, opts.runId, ticket);
      return undefined;
    }
    if (state.waiter) leaveQueue(state.waiter);
    state.waiter = undefined;
    return { ...slot, ticket };
  } finally {
    unflock(lock);
    closeSync(lock);
  }
}

/**
 * `queue.seq` is both the queue's lock (flock) and its ticket counter: 20 digits written in place
 * with one pwrite, so a SIGKILL leaves the old or the new number, never a torn one.
 */
async function lockQueue(base: string): Promise<number | undefined> {
  const path = ticketFile(base);
  for (;;) {
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o644);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      mkdirSync(base, { recursive: true }); // new, or pruned while idle
      continue;
    }
    try {
      await acquireFlock(fd, 'ex', QUEUE_LOCK_TIMEOUT_MS);
    } catch (err) {
      closeSync(fd);
      if (err instanceof StorageError && err.code === 'LOCK_TIMEOUT') return undefined;
      throw err;
    }
    if (isLockOnPath(fd, path)) return fd;
    // the file was replaced while we waited (runs root cleaned): lock the one at the path
    unflock(fd);
    closeSync(fd);
  }
}

function nextTicket(lockFd: number, waiting: number[]): number {
  const buf = Buffer.alloc(TICKET_DIGITS);
  const n = readSync(lockFd, buf, 0, TICKET_DIGITS, 0);
  const last = Number.parseInt(buf.subarray(0, n).toString('utf8'), 10) || 0;
  // never below a live waiter's ticket, even if the counter was lost
  const next = Math.max(last, ...waiting) + 1;
  writeSync(lockFd, String(next).padStart(TICKET_DIGITS, '0'), 0);
  return next;
}

const namesIn = (dir: string): string[] => {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
};

/**
 * Removes the folder of a queue nobody uses (`run-agent gc`: the fan-out queues of parent runs):
 * taken under the queue's lock without waiting (a busy queue is kept), and only when no slot is
 * held and no waiter lives. A later acquisition re-creates it. Returns true when it was (or, with
 * `dryRun`, would be) removed.
 */
export function pruneIdleQueue(base: string, dryRun = false): boolean {
  const path = ticketFile(base);
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return false;
  }
  try {
    if (!tryFlock(fd, 'ex')) return false;
    try {
      if (!isLockOnPath(fd, path)) return false;
      const busy = namesIn(join(base, 'slots')).some((n) => flockHeldByOther(join(base, 'slots', n))) || namesIn(join(base, 'queue')).some((n) => flockHeldByOther(join(base, 'queue', n)));
      if (busy) return false;
      if (!dryRun) rmSync(base, { recursive: true, force: true });
      return true;
    } finally {
      unflock(fd);
    }
  } finally {
    closeSync(fd);
  }
}

/** Leaves the queue of an unfinished turn (a caller that gives up waiting). */
export function abandonTurn(state: TurnState): void {
  if (state.waiter) leaveQueue(state.waiter);
  state.waiter = undefined;
}

function joinQueue(base: string, runId: string, ticket: number): Waiter {
  const path = join(base, 'queue', runId);
  const fd = openSync(path, 'w', 0o644);
  tryFlock(fd, 'ex');
  writeSync(fd, `${process.pid}\nticket: ${ticket}\n`);
  return { path, fd };
}

function leaveQueue(w: Waiter): void {
  rmSync(w.path, { force: true });
  try {
    unflock(w.fd);
  } finally {
    closeSync(w.fd);
  }
}

/** The tickets of live waiters other than `self`; markers of dead waiters (nobody holds their flock) are removed. */
function liveWaiters(base: string, self: string): number[] {
  let names: string[];
  try {
    names = readdirSync(join(base, 'queue'));
  } catch {
    return [];
  }
  const tickets: number[] = [];
  for (const name of names) {
    if (name === self) continue;
    const path = join(base, 'queue', name);
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch {
      continue;
    }
    try {
      if (tryFlock(fd, 'ex')) {
        rmSync(path, { force: true });
        unflock(fd);
        continue;
      }
      const theirs = /^ticket: (\d+)$/m.exec(readFileSync(fd, 'utf8'));
      if (theirs) tickets.push(Number(theirs[1]));
    } finally {
      closeSync(fd);
    }
  }
  return tickets;
}

function tryAcquireAny(base: string, limit: number): Omit<RunSlot, 'ticket'> | undefined {
  for (let i = 0; i < limit; i++) {
    const fd = openSync(join(base, 'slots', `slot-${i}.lock`), 'a', 0o644);
    if (tryFlock(fd, 'ex')) {
      let held = true;
      return {
        index: i,
        release: () => {
          if (!held) return;
          held = false;
          try {
            unflock(fd);
          } finally {
            closeSync(fd);
          }
        },
      };
    }
    closeSync(fd);
  }
  return undefined;
}
