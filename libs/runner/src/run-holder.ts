import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { flockHeldByOther, tryFlock, unflock } from '@app/storage';

/**
 * `<run>/RUNNER.lock`, flocked by the runner of a child run from the moment its record exists
 * until it has recorded the run's end. A parent waiting for its children (child-wait.ts) heals a
 * child whose agent group is gone only once nobody holds it: the child's runner may still be
 * writing `completed`. The kernel drops the lock when the runner dies, so a SIGKILLed runner's run
 * is still healed.
 */
export const RUNNER_LOCK_FILE = 'RUNNER.lock';

/** Takes the run's runner lock; the returned function releases it (idempotent). */
export function holdRun(runDir: string): () => void {
  let fd: number | undefined;
  try {
    fd = openSync(join(runDir, RUNNER_LOCK_FILE), 'a', 0o644);
    if (!tryFlock(fd, 'ex')) {
      closeSync(fd);
      fd = undefined;
    }
  } catch {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
  }
  return () => {
    if (fd === undefined) return;
    const held = fd;
    fd = undefined;
    try {
      unflock(held);
    } finally {
      closeSync(held);
    }
  };
}

/** Some process (the run's runner) holds `<run>/RUNNER.lock` right now; probed without waiting. */
export function runnerHolds(runDir: string): boolean {
  return flockHeldByOther(join(runDir, RUNNER_LOCK_FILE));
}
