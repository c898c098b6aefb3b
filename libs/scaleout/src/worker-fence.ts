import { CLAIM_MARKER, recordHeaders, type ChangeRecord } from './change-record';
import { readClaim, type StoredClaim } from './claims';
import { publishDurably, type NatsLink } from './nats';
import { changeSubject } from './subjects';

/**
 * A worker's side of the cross-host fencing epochs (epochs.ts): the claim record it publishes
 * before anything else of a task it claimed, and the check that it still holds the task.
 */

/** The first record of a claimed task: raises the task's epoch on the replica (and in later replays). */
export async function publishClaimRecord(link: NatsLink, host: string, projectId: string, taskId: string, claim: StoredClaim): Promise<void> {
  const rec: ChangeRecord = { path: `${projectId}/${taskId}/${CLAIM_MARKER}`, op: 'claim', offset: 0, data: Buffer.alloc(0), epoch: claim.seq };
  await publishDurably(link, changeSubject(host, projectId, taskId), rec.data, { msgID: `${host}:claim:${projectId}/${taskId}:${claim.seq}`, headers: recordHeaders(rec) });
}

/**
 * This host's epoch of the task: `known` (its claim in this process) or the sequence of the
 * task's current claim when this host holds it (a restarted process; 0 when nobody ever claimed
 * it: a task of a build before claims). Undefined when another host claimed the task since: this
 * host lost it and must apply nothing to it.
 */
export async function ownEpoch(link: NatsLink, host: string, projectId: string, taskId: string, known?: number): Promise<number | undefined> {
  const current = await readClaim(link, projectId, taskId);
  if (!current) return known ?? 0;
  if (current.host !== host) return undefined;
  return known ?? current.seq;
}

/** A newer claim of the task than `mine` by another host (this worker lost it), or undefined. */
export async function newerClaim(link: NatsLink, projectId: string, taskId: string, mine: StoredClaim): Promise<StoredClaim | undefined> {
  const current = await readClaim(link, projectId, taskId);
  return current && current.seq > mine.seq && current.host !== mine.host ? current : undefined;
}

/** What the claim check needs of a running task (the worker's `Active` entry). */
export interface ClaimedRun {
  claim?: StoredClaim;
  lost?: boolean;
  abort: AbortController;
}

/**
 * Stops a running task when another host claimed it since (this worker was paused or cut off
 * longer than its lease): its records are dropped by the replica anyway, and its agent must not
 * run on. Marks the run `lost` (the worker then neither acks nor releases it). Called every lease/3.
 */
export function stopIfClaimedElsewhere(link: NatsLink, task: { projectId: string; taskId: string }, run: ClaimedRun, log: (line: string) => void): void {
  const mine = run.claim;
  if (!mine || run.lost) return;
  newerClaim(link, task.projectId, task.taskId, mine).then(
    (newer) => {
      if (!newer || run.lost) return;
      run.lost = true;
      log(`lost task ${task.projectId}/${task.taskId} to host ${newer.host} (owner epoch ${mine.seq} < ${newer.seq}): stopping it here, its writes are dropped`);
      run.abort.abort(new Error(`task claimed by host ${newer.host} since`));
    },
    () => undefined, // not readable now: checked again at the next heartbeat
  );
}
