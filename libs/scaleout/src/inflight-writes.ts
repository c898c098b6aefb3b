import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '@app/storage';
import { decodeRoutedWrite, type RoutedWrite } from './task-message';
import { validateHostId } from './subjects';

/** Where the server keeps its unconfirmed routed writes (host-local, never replicated; one file per write). */
export const inflightWritesDir = (root: string) => join(root, '.conductor', 'nats-inflight');

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

  /** `dir`: kept on disk too (written before the write is published), so a restarted server still has them. */
  constructor(
    private readonly now: () => number = Date.now,
    private readonly dir?: string,
  ) {}

  private file(writeId: string): string | undefined {
    return this.dir && join(this.dir, `${writeId}.json`);
  }

  add(routed: RoutedWrite, host: string, since = this.now()): void {
    const key = `${routed.write.projectId}/${routed.write.taskId}`;
    const list = this.byTask.get(key) ?? [];
    list.push({ routed, host, since });
    this.byTask.set(key, list);
    const file = this.file(routed.writeId);
    if (file) {
      mkdirSync(this.dir!, { recursive: true });
      writeFileAtomic(file, JSON.stringify({ routed, host, since }));
    }
  }

  /**
   * The writes kept on disk by a server that stopped before their owner confirmed them, oldest
   * first (taken back into the table); an unreadable or expired one is dropped with a log line.
   */
  restore(log?: (line: string) => void): { routed: RoutedWrite; host: string }[] {
    if (!this.dir || !existsSync(this.dir)) return [];
    const out: Inflight[] = [];
    for (const name of readdirSync(this.dir).filter((n) => n.endsWith('.json'))) {
      const path = join(this.dir, name);
      try {
        const o = JSON.parse(readFileSync(path, 'utf8')) as { routed: unknown; host: string; since: number };
        const routed = decodeRoutedWrite(Buffer.from(JSON.stringify(o.routed)));
        validateHostId(o.host);
        if (!Number.isFinite(o.since) || o.since < this.now() - INFLIGHT_KEEP_MS) throw new Error('older than CONDUCTOR_CONTROL keeps writes (1 h)');
        out.push({ routed, host: o.host, since: o.since });
      } catch (err) {
        log?.(`control: unconfirmed write ${path} dropped: ${(err as Error).message}`);
        rmSync(path, { force: true });
      }
    }
    out.sort((a, b) => a.since - b.since);
    for (const e of out) {
      const key = `${e.routed.write.projectId}/${e.routed.write.taskId}`;
      this.byTask.set(key, [...(this.byTask.get(key) ?? []), e]);
    }
    return out;
  }

  /** A worker answered: the write is done with (applied or refused). */
  confirm(routed: RoutedWrite): void {
    const file = this.file(routed.writeId);
    if (file) rmSync(file, { force: true });
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
