import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { validateProjectId, validateTaskId } from '@app/storage';
import { decodeHeartbeat, heartbeatSubject, type Heartbeat } from './heartbeat';
import type { NatsLink } from './nats';
import { CLAIMS_STREAM, validateHostId } from './subjects';

/** `conductor.claims.<project>.<task>`: the one durable record of which host runs a task (last message per subject). */
export const claimSubject = (projectId: string, taskId: string) => `conductor.claims.${projectId}.${taskId}`;

/** Who runs a task: `released` once its loop ended there (the next delivery claims it at once). */
export interface Claim {
  host: string;
  leaseMs: number;
  released?: boolean;
}

/**
 * A claim as stored: `seq` is its stream sequence, strictly increasing per task with every
 * claim (a takeover's claim has a higher one). It is the seam for fencing epochs: a writer
 * holding an older `seq` than the task's current claim lost the task.
 */
export interface StoredClaim extends Claim {
  seq: number;
}

/** NATS error code of a publish whose `Nats-Expected-Last-Subject-Sequence` did not match. */
const WRONG_LAST_SEQUENCE = 10071;

/** The one reader of claims; an unreadable record is a claim of no host (nobody heartbeats for it). */
export function decodeClaim(data: Uint8Array, seq: number): StoredClaim {
  try {
    const o = JSON.parse(Buffer.from(data).toString('utf8')) as Claim;
    validateHostId(o.host);
    if (!Number.isInteger(o.leaseMs) || o.leaseMs < 1) throw new Error('lease');
    return { host: o.host, leaseMs: o.leaseMs, released: o.released === true, seq };
  } catch {
    return { host: '', leaseMs: 1, seq };
  }
}

export async function readClaim(link: NatsLink, projectId: string, taskId: string): Promise<StoredClaim | undefined> {
  const m = await link.jsm.streams.getMessage(CLAIMS_STREAM, { last_by_subj: claimSubject(validateProjectId(projectId), validateTaskId(taskId)) });
  return m ? decodeClaim(m.data, m.seq) : undefined;
}

/**
 * Writes a claim if the task's current one is still `expectSeq` (0: none yet): compare-and-set
 * through JetStream's expected last subject sequence. Undefined when another host wrote first.
 */
export async function writeClaim(link: NatsLink, projectId: string, taskId: string, claim: Claim, expectSeq: number): Promise<number | undefined> {
  try {
    const ack = await link.js.publish(claimSubject(projectId, taskId), JSON.stringify(claim), { expect: { lastSubjectSequence: expectSeq }, timeout: 5000 });
    return ack.seq;
  } catch (err) {
    if ((err as { code?: unknown }).code === WRONG_LAST_SEQUENCE) return undefined;
    throw err;
  }
}

/** The heartbeats other workers send, as this worker receives them (for judging a claim's holder). */
export class HeartbeatWatch {
  private readonly waiters = new Set<(hb: Heartbeat) => void>();
  private sub?: Subscription;

  start(nc: NatsConnection): void {
    this.sub = nc.subscribe(heartbeatSubject('*'), {
      callback: (_err, msg) => {
        const hb = decodeHeartbeat(msg.data);
        if (hb) for (const w of [...this.waiters]) w(hb);
      },
    });
  }

  stop(): void {
    this.sub?.unsubscribe();
  }

  /** The first heartbeat of `host` from now on, or undefined after `timeoutMs`. */
  next(host: string, timeoutMs: number): Promise<Heartbeat | undefined> {
    return new Promise((resolve) => {
      const done = (hb: Heartbeat | undefined) => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
        resolve(hb);
      };
      const waiter = (hb: Heartbeat) => {
        if (hb.host === host) done(hb);
      };
      const timer = setTimeout(() => done(undefined), timeoutMs);
      this.waiters.add(waiter);
    });
  }
}

export type ClaimOutcome = { claimed: StoredClaim; tookFrom?: string } | { busy: string };

/**
 * Claims a delivered task for `host` before it runs there. A task another host claimed (and did
 * not release) is taken over only when that host's next heartbeat does not list it or none comes
 * within its lease (+1 s): a redelivery while its holder still runs it (a NATS restart loses the
 * in-progress acks of every delivery, #30 defect 8) is left to the holder (`busy`).
 */
export async function claimTask(link: NatsLink, watch: HeartbeatWatch, projectId: string, taskId: string, mine: Claim): Promise<ClaimOutcome> {
  const key = `${projectId}/${taskId}`;
  for (;;) {
    const current = await readClaim(link, projectId, taskId);
    let tookFrom: string | undefined;
    if (current && !current.released && current.host !== mine.host) {
      const hb = await watch.next(current.host, current.leaseMs + 1000);
      if (hb?.tasks.includes(key)) return { busy: current.host };
      tookFrom = current.host || '(unreadable claim)';
    }
    const seq = await writeClaim(link, projectId, taskId, mine, current?.seq ?? 0);
    if (seq !== undefined) return { claimed: { ...mine, seq }, tookFrom };
    // another host claimed it between the read and the write: judge the new claim
  }
}

/** Marks the task's claim released once its loop ended here (unless a takeover claimed it since). */
export async function releaseClaim(link: NatsLink, projectId: string, taskId: string, claim: StoredClaim): Promise<void> {
  await writeClaim(link, projectId, taskId, { host: claim.host, leaseMs: claim.leaseMs, released: true }, claim.seq);
}
