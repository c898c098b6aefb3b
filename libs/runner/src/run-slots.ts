import { closeSync, constants, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { acquireFlock, isLockOnPath, StorageError, tryFlock, unflock } from '@app/storage';
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
}

export function slotsDir(root: string): string {
  return join(root, '.conductor', 'slots');
}

export function queueDir(root: string): string {
  return join(root, '.conductor', 'queue');
}

const ticketFile = (root: string) => join(root, '.conductor', 'queue.seq');
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
  const state: TurnState = { ticket: opts.ticket };
  try {
    for (;;) {
      if (opts.signal?.aborted) throw new RunnerError('STOPPED', 'acquire run slot: cancelled while queued');
      const slot = await takeTurn(opts, state);
      if (slot) return slot;
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
export async function takeTurn(opts: Pick<AcquireOptions, 'root' | 'limit' | 'runId'>, state: TurnState): Promise<RunSlot | undefined> {
  mkdirSync(slotsDir(opts.root), { recursive: true });
  mkdirSync(queueDir(opts.root), { recursive: true });
  const lock = await lockQueue(opts.root);
  if (lock === undefined) return undefined;
  try {
    const waiting = liveWaiters(opts.root, opts.runId);
    const ticket = (state.ticket ??= nextTicket(lock, waiting));
    const slot = waiting.some((t) => t < ticket) ? undefined : tryAcquireAny(opts.root, opts.limit);
    if (!slot) {
      state.waiter ??= joinQueue(opts.root, opts.runId, ticket);
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
async function lockQueue(root: string): Promise<number | undefined> {
  const path = ticketFile(root);
  for (;;) {
    const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o644);
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

function joinQueue(root: string, runId: string, ticket: number): Waiter {
  const path = join(queueDir(root), runId);
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
function liveWaiters(root: string, self: string): number[] {
  let names: string[];
  try {
    names = readdirSync(queueDir(root));
  } catch {
    return [];
  }
  const tickets: number[] = [];
  for (const name of names) {
    if (name === self) continue;
    const path = join(queueDir(root), name);
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

function tryAcquireAny(root: string, limit: number): Omit<RunSlot, 'ticket'> | undefined {
  for (let i = 0; i < limit; i++) {
    const fd = openSync(join(slotsDir(root), `slot-${i}.lock`), 'a', 0o644);
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
