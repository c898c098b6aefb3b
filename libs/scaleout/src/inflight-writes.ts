import type { RoutedWrite } from './task-message';

interface Inflight {
  routed: RoutedWrite;
  host: string;
  since: number;
}

/** As long as CONDUCTOR_CONTROL keeps a write (max age 1 h): an older unconfirmed write is given up. */
export const INFLIGHT_KEEP_MS = 60 * 60 * 1000;

/**
 * Routed writes no worker has confirmed yet, per task, in the order they were sent. When another
 * host takes the task over (its first record of the task reaches the replica), they are sent
 * again, to it, under the same write id: a message the lost host did append (and whose records
 * were replayed to the new owner) is found by that id and not appended twice.
 */
export class InflightWrites {
  private readonly byTask = new Map<string, Inflight[]>();

  constructor(private readonly now: () => number = Date.now) {}

  add(routed: RoutedWrite, host: string): void {
    const key = `${routed.write.projectId}/${routed.write.taskId}`;
    const list = this.byTask.get(key) ?? [];
    list.push({ routed, host, since: this.now() });
    this.byTask.set(key, list);
  }

  /** A worker answered: the write is done with (applied or refused). */
  confirm(routed: RoutedWrite): void {
    const key = `${routed.write.projectId}/${routed.write.taskId}`;
    const list = this.byTask.get(key)?.filter((e) => e.routed.writeId !== routed.writeId);
    if (list?.length) this.byTask.set(key, list);
    else this.byTask.delete(key);
  }

  /** The task's unconfirmed writes sent to another host than `owner` (now re-addressed to it), oldest first. */
  takeOver(projectId: string, taskId: string, owner: string): RoutedWrite[] {
    const list = this.byTask.get(`${projectId}/${taskId}`);
    if (!list) return [];
    const cutoff = this.now() - INFLIGHT_KEEP_MS;
    const out: RoutedWrite[] = [];
    for (const e of list.filter((x) => x.since >= cutoff)) {
      if (e.host === owner) continue;
      e.host = owner;
      out.push(e.routed);
    }
    return out;
  }

  size(): number {
    let n = 0;
    for (const l of this.byTask.values()) n += l.length;
    return n;
  }
}
