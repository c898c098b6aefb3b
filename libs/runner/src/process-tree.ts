import { readFileSync } from 'node:fs';
import { isProcessRunning as processRunning, procPids } from '@app/storage';

export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  state: string;
}

/** Parses /proc/<pid>/stat; the command name may contain spaces and parentheses, so split after the last ')'. */
export function readProcStat(pid: number): ProcInfo | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  return { pid, state: fields[0], ppid: Number(fields[1]), pgid: Number(fields[2]), sid: Number(fields[3]) };
}

export function listProcesses(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const pid of procPids() ?? []) {
    const info = readProcStat(pid);
    if (info) out.push(info);
  }
  return out;
}

/**
 * Every process that belongs to one of the given groups, plus all their descendants by parent pid
 * (which catches processes that left the group with setsid). Snapshot taken once, before signalling.
 */
export function collectProcessTree(pgids: number[], pids: number[] = []): number[] {
  const procs = listProcesses();
  const children = new Map<number, number[]>();
  for (const p of procs) {
    const list = children.get(p.ppid) ?? [];
    list.push(p.pid);
    children.set(p.ppid, list);
  }
  const groups = new Set(pgids.filter((g) => g > 0));
  const found = new Set<number>();
  const queue = [...pids.filter((p) => p > 0), ...procs.filter((p) => groups.has(p.pgid)).map((p) => p.pid)];
  while (queue.length > 0) {
    const pid = queue.pop()!;
    if (found.has(pid) || pid === process.pid) continue;
    found.add(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return [...found];
}

/** A process that exists and is not a zombie (zombies hold no resources and only await reaping). */
export function isProcessRunning(pid: number): boolean {
  return processRunning(pid) ?? readProcStat(pid) !== undefined;
}

/** Sends a signal, ignoring processes that are already gone. */
export function sendSignal(target: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(target, signal);
    return true;
  } catch {
    return false;
  }
}
