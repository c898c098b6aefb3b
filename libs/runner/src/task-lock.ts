import { closeSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isLockOnPath, tryFlock, unflock, type LivenessProbe } from '@app/storage';
import { RunnerError } from './runner.errors';
import { sleep } from './sleep';

export const TASK_LOCK_FILE = 'TASK.lock';
const LOCK_POLL_MS = 20;

function lockHolderPid(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
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

/**
 * One Ralph loop per task: an exclusive flock on <task>/TASK.lock, held until the returned release
 * is called; another holder makes it fail (after polling up to `waitMs`). The kernel drops the lock
 * when the holder dies, so a crashed loop never blocks the next one. Node opens files close-on-exec,
 * so agents do not inherit it.
 */
export async function lockTask(taskDir: string, projectId: string, taskId: string, waitMs: number): Promise<() => void> {
  const path = join(taskDir, TASK_LOCK_FILE);
  const deadline = Date.now() + waitMs;
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
      if (Date.now() < deadline) {
        await sleep(Math.min(LOCK_POLL_MS, deadline - Date.now()));
        continue;
      }
      const pid = lockHolderPid(path);
      throw new RunnerError(
        'TASK_LOCKED',
        `task ${taskId} is already running (its Ralph loop is held by another process${pid ? `, pid ${pid}` : ''}); ` +
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
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      ftruncateSync(fd, 0);
      unflock(fd);
      closeSync(fd);
    };
  }
}
