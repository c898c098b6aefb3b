import type { RunInfo } from './run-info';

/**
 * "Is this process / run alive?" (runner-agents.md §2.10). The only place that probes processes
 * with signal 0, so a multi-host probe can replace it later.
 */
export class LivenessProbe {
  /** kill(pid, 0) succeeds. EPERM counts as dead (upstream semantics); zombies count as alive. */
  isPidAlive(pid: number): boolean {
    if (!Number.isInteger(pid) || pid <= 0) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }

  /** kill(-pgid, 0): success or EPERM ⇒ alive, ESRCH ⇒ dead; other errors count as dead. */
  isGroupAlive(pgid: number): boolean {
    if (!Number.isInteger(pgid) || pgid <= 0) return false;
    try {
      process.kill(-pgid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM';
    }
  }

  /** The agent process or its process group still exists. */
  isRunAlive(info: Pick<RunInfo, 'pid' | 'pgid'>): boolean {
    return (info.pid > 0 && this.isPidAlive(info.pid)) || (info.pgid > 0 && this.isGroupAlive(info.pgid));
  }
}
