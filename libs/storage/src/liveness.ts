import type { RunInfo } from './run-info';

/**
 * "Is this process / run alive?" (runner-agents.md §2.10). The only place that probes processes
 * with signal 0, so a multi-host probe can replace it later.
 */
/** What liveness reads of a run record. */
export type RunLiveness = Pick<RunInfo, 'pid' | 'pgid'> & Partial<Pick<RunInfo, 'starting' | 'in_process'>>;

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

  /**
   * The agent process or its process group still exists. A runner's own record (`starting`,
   * before its agent; `in_process`, a REST run) names the runner's group, which it may share with
   * its caller (a script, the server, a parent agent): only the runner's pid says it lives.
   */
  isRunAlive(info: RunLiveness): boolean {
    if (info.starting || info.in_process) return this.isPidAlive(info.pid);
    return (info.pid > 0 && this.isPidAlive(info.pid)) || (info.pgid > 0 && this.isGroupAlive(info.pgid));
  }
}
