import { closeSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tryFlock, unflock } from '@app/storage';
import { RunnerError } from './runner.errors';
import { sleep } from './sleep';

export interface RunSlot {
  index: number;
  release(): void;
}

export interface AcquireOptions {
  root: string;
  limit: number;
  runId: string;
  pollMs?: number;
  signal?: AbortSignal;
}

export function slotsDir(root: string): string {
  return join(root, '.conductor', 'slots');
}

export function queueDir(root: string): string {
  return join(root, '.conductor', 'queue');
}

const UNLIMITED: RunSlot = { index: -1, release: () => undefined };

/**
 * max_concurrent_runs across every process sharing the runs root (D13): N lock files
 * `<root>/.conductor/slots/slot-<i>.lock`, one held with flock per running agent. The kernel drops
 * the lock when the holder dies, so a crashed runner never leaks a slot. Waiting runs leave a
 * `<root>/.conductor/queue/<run_id>` marker so they are visible to `status` and metrics.
 */
export async function acquireRunSlot(opts: AcquireOptions): Promise<RunSlot> {
  if (!(opts.limit > 0)) return UNLIMITED;
  mkdirSync(slotsDir(opts.root), { recursive: true });
  let marker: string | undefined;
  try {
    for (;;) {
      const slot = tryAcquireAny(opts.root, opts.limit);
      if (slot) return slot;
      if (!marker) {
        mkdirSync(queueDir(opts.root), { recursive: true });
        marker = join(queueDir(opts.root), opts.runId);
        writeFileSync(marker, `${process.pid}\n`);
      }
      if (!(await sleep(opts.pollMs ?? 50, opts.signal))) {
        throw new RunnerError('STOPPED', 'acquire run slot: cancelled while queued');
      }
    }
  } finally {
    if (marker) rmSync(marker, { force: true });
  }
}

function tryAcquireAny(root: string, limit: number): RunSlot | undefined {
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
