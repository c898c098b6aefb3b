import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { resolve } from 'node:path';
import type { RunInfo } from './run-info';

/**
 * The one zombie rule (issue #31, deviations D21): a zombie (or dying, state Z/X) is an exited
 * process, not a live one; it only awaits reaping (by its live parent, or by init once the parent
 * is gone). Upstream counts it alive; here liveness and the runner's adopt/refuse checks share this.
 * Undefined where /proc is unavailable (the caller keeps kill(…, 0)'s answer).
 */
export function processState(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

function processGroupOf(pid: number): number | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return undefined;
  }
}

const exited = (state: string | undefined): boolean => state === undefined || state === 'Z' || state === 'X';

/** The pids /proc lists now; undefined without /proc. */
export function procPids(): number[] | undefined {
  try {
    return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number);
  } catch {
    return undefined;
  }
}

/**
 * Whether a process this user can see has `file` open (its /proc/<pid>/fd links); false without
 * /proc. A git process holds its lock file open from creating it to renaming it into place.
 */
export function fileHeldOpen(file: string): boolean {
  const target = resolve(file);
  for (const pid of procPids() ?? []) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or another user's
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === target) return true;
      } catch {
        // closed meanwhile
      }
    }
  }
  return false;
}

/** A process that exists and has not exited (not a zombie); undefined without /proc. */
export function isProcessRunning(pid: number): boolean | undefined {
  if (!existsSync('/proc/self/stat')) return undefined;
  return !exited(processState(pid));
}

/** A process group with a member that has not exited (zombies do not count); undefined without /proc. */
export function groupHasRunningMember(pgid: number): boolean | undefined {
  if (!existsSync('/proc/self/stat')) return undefined;
  const pids = procPids();
  if (!pids) return undefined;
  for (const pid of pids) {
    try {
      const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && !exited(fields[0])) return true;
    } catch {
      // gone meanwhile
    }
  }
  return false;
}

/**
 * "Is this process / run alive?" (runner-agents.md §2.10). The only place that probes processes
 * with signal 0, so a multi-host probe can replace it later.
 */
/** What liveness reads of a run record. */
export type RunLiveness = Pick<RunInfo, 'pid' | 'pgid'> & Partial<Pick<RunInfo, 'starting' | 'in_process'>>;

export class LivenessProbe {
  /** kill(pid, 0) succeeds and the process is not a zombie (the one zombie rule above). EPERM counts as dead (upstream semantics). */
  isPidAlive(pid: number): boolean {
    if (!Number.isInteger(pid) || pid <= 0) return false;
    try {
      process.kill(pid, 0);
    } catch {
      return false;
    }
    return isProcessRunning(pid) ?? true;
  }

  /** kill(-pgid, 0): success or EPERM ⇒ alive unless every member is a zombie, ESRCH ⇒ dead; other errors count as dead. */
  isGroupAlive(pgid: number): boolean {
    if (!Number.isInteger(pgid) || pgid <= 0) return false;
    try {
      process.kill(-pgid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
    }
    if (isProcessRunning(pgid) && processGroupOf(pgid) === pgid) return true; // the leader lives: no scan
    return groupHasRunningMember(pgid) ?? true;
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
