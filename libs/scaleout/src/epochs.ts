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
export class EpochFloors {
  private readonly floors = new Map<string, number>();

  /** `file`: where the floors survive a restart (the replica's; a replay keeps them in memory). */
  constructor(private readonly file?: string) {
    if (!file || !existsSync(file)) return;
    try {
      const o = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      for (const [k, v] of Object.entries(o)) if (Number.isSafeInteger(v) && (v as number) > 0) this.floors.set(k, v as number);
    } catch {
      // unreadable: start from what the stream brings (records are re-applied from the ack floor)
    }
  }

  /** The newest epoch seen for the task (0: none yet). */
  floor(projectId: string, taskId: string): number {
    return this.floors.get(`${projectId}/${taskId}`) ?? 0;
  }

  /**
   * Whether a record of `epoch` (0: a record without one, from an older build) may apply: false
   * when a newer epoch of the task was seen. Raises the floor (durably, before the record is
   * applied and acknowledged) when it is newer.
   */
  admit(projectId: string, taskId: string, epoch: number): boolean {
    const key = `${projectId}/${taskId}`;
    const floor = this.floors.get(key) ?? 0;
    if (epoch < floor) return false;
    if (epoch > floor) {
      this.floors.set(key, epoch);
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

/**
 * The one fencing rule for an incoming record of `conductor.changes.<host>.<project>.<task>`:
 * project-bus entries (several writers, applied once by msg_id) pass; a task record passes unless a
 * newer epoch of its task was seen.
 */
export function admitRecord(floors: EpochFloors, projectId: string, taskToken: string, rec: ChangeRecord): boolean {
  return taskToken === PROJECT_TOKEN || floors.admit(projectId, taskToken, rec.epoch ?? 0);
}

/** The replica's floors, beside its other host-local records (never replicated, never listed as a project). */
export const replicaEpochsFile = (root: string) => join(root, '.conductor', 'replica-epochs.json');
