import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '@app/storage';
import type { ChangeRecord } from './change-record';
import { PROJECT_TOKEN } from './subjects';

/**
 * Fencing epochs across hosts (issue #31). A task's epoch on the scale-out path is the stream
 * sequence of the claim that gave it to a host (CONDUCTOR_CLAIMS: strictly increasing with every
 * claim, a takeover's claim is higher). Every change record a worker publishes for the task
 * carries its claim's sequence (`Cl-Epoch`), and a worker that claims a task publishes a `claim`
 * record first. The replica, and a takeover's replay, keep the newest epoch seen per task and drop
 * a record carrying an older one: the late write of a host that lost the task (a paused or
 * partitioned worker) never reaches the replica, nor the copy of the host that continued it.
 */
/**
 * A task's floor: the newest claim epoch seen (`epoch`), the host that holds it, and `since`: the
 * first epoch of that host's current, unbroken ownership (its claims with no other host's claim
 * between them). A record of the owner under any of its own epochs (`since`..) is still the
 * owner's: e.g. a file record of its first claim that a NATS outage delayed behind the claim
 * record of its re-claim. Only a host that lost the task to another one is fenced.
 */
interface Floor {
  epoch: number;
  host: string;
  since: number;
}

export class EpochFloors {
  private readonly floors = new Map<string, Floor>();

  /** `file`: where the floors survive a restart (the replica's; a replay keeps them in memory). */
  constructor(private readonly file?: string) {
    if (!file || !existsSync(file)) return;
    try {
      const o = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      for (const [k, v] of Object.entries(o)) {
        const f = parseFloor(v);
        if (f) this.floors.set(k, f);
      }
    } catch {
      // unreadable: start from what the stream brings (records are re-applied from the ack floor)
    }
  }

  /** The newest epoch seen for the task (0: none yet). */
  floor(projectId: string, taskId: string): number {
    return this.floors.get(`${projectId}/${taskId}`)?.epoch ?? 0;
  }

  /**
   * Whether a record of `host` under `epoch` (0: a record without one, from an older build) may
   * apply: false when another host claimed the task after that epoch (a newer epoch of another
   * host, or of this host after another host's). Raises the floor (durably, before the record is
   * applied and acknowledged) when it is newer.
   */
  admit(projectId: string, taskId: string, epoch: number, host: string): boolean {
    const key = `${projectId}/${taskId}`;
    const f = this.floors.get(key);
    if (f && epoch < f.epoch) return host === f.host && epoch >= f.since;
    if (!f || epoch > f.epoch) {
      this.floors.set(key, { epoch, host, since: f && host === f.host ? f.since : epoch });
      this.save();
    }
    return true;
  }

  private save(): void {
    if (!this.file) return;
    mkdirSync(dirname(this.file), { recursive: true });
    writeFileAtomic(this.file, `${JSON.stringify(Object.fromEntries(this.floors))}\n`);
  }
}

/** A stored floor; a bare number is the format before `host`/`since` (no host known: fences every older epoch). */
function parseFloor(v: unknown): Floor | undefined {
  const ok = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;
  if (ok(v)) return v > 0 ? { epoch: v, host: '', since: v } : undefined;
  const o = v as Partial<Floor> | null;
  if (!o || typeof o !== 'object' || !ok(o.epoch) || !ok(o.since) || typeof o.host !== 'string' || o.since > o.epoch) return undefined;
  return { epoch: o.epoch, host: o.host, since: o.since };
}

/**
 * The one fencing rule for an incoming record of `conductor.changes.<host>.<project>.<task>`:
 * project-bus entries (several writers, applied once by msg_id) pass; a task record passes unless
 * another host claimed its task after the record's epoch (a host that lost the task).
 */
export function admitRecord(floors: EpochFloors, host: string, projectId: string, taskToken: string, rec: ChangeRecord): boolean {
  return taskToken === PROJECT_TOKEN || floors.admit(projectId, taskToken, rec.epoch ?? 0, host);
}

/** The replica's floors, beside its other host-local records (never replicated, never listed as a project). */
export const replicaEpochsFile = (root: string) => join(root, '.conductor', 'replica-epochs.json');
