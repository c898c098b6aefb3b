import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConsumerMessages } from '@nats-io/jetstream';
import { prepareMessage, type BusMessage, type NewMessage } from '@app/messagebus';
import { applyRecord, decodeRecord, PROJECT_BUS, recordHeaders } from './change-record';
import { admitRecord, EpochFloors, replicaEpochsFile } from './epochs';
import { readClaim } from './claims';
import { decodeHeartbeat, HeartbeatLivenessProbe, HeartbeatTable, heartbeatSubject } from './heartbeat';
import { connectNats, DEFAULT_LEASE_MS, ensureConsumer, natsClient, publishDurably, syncNote, type LinkOptions, type NatsLink } from './nats';
import { ALL_HOSTS, CHANGES_STREAM, ScaleoutError, changeSubject, controlSubject, SERVER_HOST, parseChangeSubject, PROJECT_TOKEN, REPLICA_CONSUMER, taskSubject } from './subjects';
import { InflightWrites, inflightWritesDir, INFLIGHT_KEEP_MS } from './inflight-writes';
import { PendingTasks } from './pending';
import { submissionId, type QueuedTask, type RoutedWrite } from './task-message';
import { fromWireError, type TaskWrite, type TaskWriteResult, type TaskWrites, type WireError } from './task-writes';

type Reply = { result?: TaskWriteResult; error?: WireError };

export interface ReplicaEvent {
  host: string;
  path: string;
  applied: boolean;
}

/**
 * The server side of scale-out: submits root tasks to the work queue, applies every worker's
 * change records to the local runs root (a read-only replica the API reads as usual) in stream
 * order, and routes stop requests to the worker that owns the task.
 */
export class ScaleoutServer implements TaskWrites {
  private link!: NatsLink;
  private messages?: ConsumerMessages;
  private loop?: Promise<void>;
  private readonly owners = new Map<string, string>();
  private closed = false;
  /** Next stream sequence of CONDUCTOR_CHANGES the replica expects: a jump means records were dropped by retention. */
  private expected = 1;
  private readonly snapshotAsked = new Map<string, number>();
  /** Workers' heartbeats: how the server judges a replicated run alive. */
  readonly heartbeats: HeartbeatTable;
  readonly liveness: HeartbeatLivenessProbe;
  /** Accepted tasks no worker has reported yet (and those held for their dependencies). */
  readonly pending: PendingTasks;
  private readonly inflight: InflightWrites;
  /** The newest claim epoch seen per task: older records are dropped (a host that lost the task). */
  private readonly floors: EpochFloors;
  private releaser?: NodeJS.Timeout;

  constructor(
    private readonly url: string,
    private readonly root: string,
    private readonly opts: LinkOptions & {
      log?: (line: string) => void;
      /** After start, a task no heartbeat has listed yet counts as alive this long (default: the default lease). */
      leaseMs?: number;
      onApplied?: (e: ReplicaEvent) => void;
      /** How long a routed write waits for the owning worker's confirmation (default 15 s). */
      writeTimeoutMs?: number;
    } = {},
  ) {
    this.heartbeats = new HeartbeatTable(opts.leaseMs ?? DEFAULT_LEASE_MS);
    this.liveness = new HeartbeatLivenessProbe(this.heartbeats);
    this.pending = new PendingTasks(root, opts.log);
    this.inflight = new InflightWrites(Date.now, inflightWritesDir(root));
    this.floors = new EpochFloors(replicaEpochsFile(root));
  }

  async start(): Promise<void> {
    this.link = await connectNats(this.url, 'conductor', this.opts);
    this.opts.log?.(syncNote(this.link.serverVersion));
    this.link.nc.subscribe(heartbeatSubject('*'), {
      callback: (_err, m) => {
        const hb = decodeHeartbeat(m.data);
        if (hb) this.heartbeats.record(hb);
      },
    });
    await ensureConsumer(this.link.jsm, CHANGES_STREAM, {
      durable_name: REPLICA_CONSUMER,
      ack_policy: natsClient().jetstream.AckPolicy.Explicit,
      deliver_policy: natsClient().jetstream.DeliverPolicy.All,
      filter_subject: 'conductor.changes.>',
    });
    const consumer = await this.link.jsm.consumers.info(CHANGES_STREAM, REPLICA_CONSUMER);
    this.expected = consumer.ack_floor.stream_seq + 1;
    await this.resendRestored();
    this.loop = this.applyLoop();
    this.releaser = setInterval(() => this.releaseHeld(), 1000);
  }

  /** Queues the held tasks whose dependencies are DONE on the replica now. */
  private releaseHeld(): void {
    for (const task of this.pending.release()) {
      this.publish(task).then(
        () => this.pending.queued(task.projectId, task.taskId),
        (err) => {
          this.pending.hold(task.projectId, task.taskId);
          this.opts.log?.(`queue ${task.projectId}/${task.taskId}: ${(err as Error).message}; retrying`);
        },
      );
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.releaser);
    await this.messages?.close();
    await this.loop?.catch(() => undefined);
    await this.link?.close();
  }

  /**
   * Accepts a root task: queued now, or held until its dependencies are DONE on the replica.
   * False when JetStream rejected it as a duplicate of the same launch.
   */
  async submit(task: QueuedTask): Promise<boolean> {
    if (!this.pending.add(task)) return true;
    try {
      return await this.publish(task);
    } catch (err) {
      this.pending.delete(task.projectId, task.taskId);
      throw err;
    }
  }

  private async publish(task: QueuedTask): Promise<boolean> {
    const ack = await publishDurably(this.link, taskSubject(task.projectId), JSON.stringify(task), { msgID: submissionId(task) });
    return !ack.duplicate;
  }

  /** The host whose records of this task were applied last (undefined before any). */
  owner(projectId: string, taskId: string): string | undefined {
    return this.owners.get(`${projectId}/${taskId}`);
  }

  /**
   * The owner, also after a restart of this server: the host of the task's current claim
   * (CONDUCTOR_CLAIMS), else the host with the latest record of the task in the change stream.
   */
  async ownerOf(projectId: string, taskId: string): Promise<string | undefined> {
    const known = this.owner(projectId, taskId);
    if (known) return known;
    const claim = await readClaim(this.link, projectId, taskId).catch(() => undefined);
    if (claim?.host) {
      this.owners.set(`${projectId}/${taskId}`, claim.host);
      return claim.host;
    }
    const info = await this.link.jsm.streams.info(CHANGES_STREAM, { subjects_filter: `conductor.changes.*.${projectId}.${taskId}` });
    let best: { host: string; seq: number } | undefined;
    for (const subject of Object.keys(info.state.subjects ?? {})) {
      const last = await this.link.jsm.streams.getMessage(CHANGES_STREAM, { last_by_subj: subject }).catch(() => null);
      const host = parseChangeSubject(subject)?.host;
      if (last && host && (!best || last.seq > best.seq)) best = { host, seq: last.seq };
    }
    if (best) this.owners.set(`${projectId}/${taskId}`, best.host);
    return best?.host;
  }

  /**
   * A task write, applied by the worker that owns the task (to every worker when no owner is
   * known: only the one holding the task applies it) and confirmed back; the replica gets the
   * result through the change stream. The write is stored in JetStream before we wait, so a
   * worker that is slow to confirm still applies it.
   */
  async apply(write: TaskWrite): Promise<TaskWriteResult> {
    if (this.pending.isHeld(write.projectId, write.taskId)) {
      // not queued yet: a cancel or stop drops it here; anything else has no files to go to
      if (write.op === 'done' || write.op === 'stop-task') {
        this.pending.delete(write.projectId, write.taskId);
        return {};
      }
      throw new ScaleoutError('NATS', `task ${write.projectId}/${write.taskId} waits on the server for its dependencies; no worker holds it yet`);
    }
    const host = (await this.ownerOf(write.projectId, write.taskId)) ?? ALL_HOSTS;
    const { createInbox } = natsClient().transport as unknown as { createInbox(): string };
    const replyTo = createInbox();
    const timeoutMs = this.opts.writeTimeoutMs ?? 15_000;
    const writeId = replyTo.slice('_INBOX.'.length).replace(/[^A-Za-z0-9_-]/g, '').slice(0, 64);
    // the task's newest epoch as the replica knows it: a worker holding an older claim applies nothing
    const epoch = this.floors.floor(write.projectId, write.taskId);
    const routed: RoutedWrite = { writeId, replyTo, write, ...(epoch > 0 ? { epoch } : {}) };
    // the answer may come late, from the worker that took the task over (the write re-sent to it)
    const sub = this.link.nc.subscribe(replyTo, { max: 1 });
    const answered = (async () => {
      for await (const m of sub) return m.json<Reply>();
      return undefined;
    })();
    if (host !== ALL_HOSTS) {
      this.inflight.add(routed, host);
      const giveUp = setTimeout(() => sub.unsubscribe(), INFLIGHT_KEEP_MS).unref();
      void answered.finally(() => {
        clearTimeout(giveUp);
        this.inflight.confirm(routed);
      });
    }
    try {
      await publishDurably(this.link, controlSubject(host), JSON.stringify(routed));
    } catch (err) {
      sub.unsubscribe();
      throw err;
    }
    let timer: NodeJS.Timeout | undefined;
    const reply = await Promise.race([answered, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), timeoutMs)))]);
    clearTimeout(timer);
    if (!reply) {
      if (host === ALL_HOSTS) {
        sub.unsubscribe();
        throw new ScaleoutError('NATS', `no worker confirmed the ${write.op} on task ${write.projectId}/${write.taskId} within ${timeoutMs / 1000}s (sent to every worker; it stays queued)`);
      }
      throw new ScaleoutError('NATS', `worker ${host} did not confirm the ${write.op} on task ${write.projectId}/${write.taskId} within ${timeoutMs / 1000}s; it stays queued, and a worker that takes the task over applies it once: do not send it again`);
    }
    if (reply.error) throw fromWireError(reply.error);
    return reply.result ?? {};
  }

  /**
   * A message for a project's bus (several hosts append to it; no owner to route to): published
   * as a record of the server host, so the replica is written only by the replication consumer;
   * resolves once the replica holds it (a read right after the post finds it).
   */
  async postProjectMessage(input: NewMessage, maxBodyBytes?: number): Promise<BusMessage> {
    const { msg, entry } = prepareMessage(input, maxBodyBytes);
    const path = `${msg.project_id}/${PROJECT_BUS}`;
    const rec = { path, op: 'entries' as const, offset: 0, data: Buffer.from(entry) };
    await publishDurably(this.link, changeSubject(SERVER_HOST, msg.project_id, PROJECT_TOKEN), rec.data, { msgID: `${SERVER_HOST}/${msg.msg_id}`, headers: recordHeaders(rec) });
    const file = join(this.root, path);
    const deadline = Date.now() + (this.opts.writeTimeoutMs ?? 15_000);
    while (!(existsSync(file) && readFileSync(file, 'utf8').includes(`msg_id: ${msg.msg_id}\n`))) {
      if (Date.now() > deadline) throw new ScaleoutError('NATS', `the project message ${msg.msg_id} is queued but not replicated yet`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return msg;
  }

  /**
   * Writes a previous run of this server sent and no worker confirmed (kept on disk): sent again
   * to the task's owner now (it may have changed while the server was down), same write ids, with
   * a reply subject of this process. A worker that applied one already answers with its recorded
   * result and applies nothing; a later takeover gets them too.
   */
  private async resendRestored(): Promise<void> {
    const restored = this.inflight.restore(this.opts.log);
    for (const { routed } of restored) {
      const { projectId, taskId } = routed.write;
      const owner = (await this.ownerOf(projectId, taskId).catch(() => undefined)) ?? restored.find((e) => e.routed === routed)!.host;
      this.inflight.takeOver(projectId, taskId, owner);
      const { createInbox } = natsClient().transport as unknown as { createInbox(): string };
      routed.replyTo = createInbox();
      const sub = this.link.nc.subscribe(routed.replyTo, { max: 1, callback: () => this.inflight.confirm(routed) });
      setTimeout(() => sub.unsubscribe(), INFLIGHT_KEEP_MS).unref();
      this.opts.log?.(`control: ${routed.write.op} on ${projectId}/${taskId} (write ${routed.writeId}) unconfirmed before the restart: sent again to ${owner}`);
      await publishDurably(this.link, controlSubject(owner), JSON.stringify(routed));
    }
  }

  /** Unconfirmed writes of a task another host took over: to the new owner, in order, same write ids. */
  private resendTo(host: string, writes: RoutedWrite[]): void {
    for (const routed of writes) {
      this.opts.log?.(`control: ${routed.write.op} on ${routed.write.projectId}/${routed.write.taskId} re-sent to ${host}, which took the task over`);
      void publishDurably(this.link, controlSubject(host), JSON.stringify(routed)).catch((err) => this.opts.log?.(`control: re-send failed: ${(err as Error).message}`));
    }
  }

  /**
   * Asks the workers to send files again (all, or one task's): how a replica that started late
   * or fell behind the stream's retention catches up. At most once per 10 s per scope.
   */
  private askSnapshot(scope: { projectId?: string; taskId?: string }, why: string): void {
    const now = Date.now();
    const key = scope.projectId ? `${scope.projectId}/${scope.taskId}` : '*';
    if (now - (this.snapshotAsked.get('*') ?? 0) < 10_000 || now - (this.snapshotAsked.get(key) ?? 0) < 10_000) return;
    this.snapshotAsked.set(key, now);
    this.opts.log?.(`replica: ${why}; asking the workers for a snapshot of ${key === '*' ? 'every task' : key}`);
    void publishDurably(this.link, controlSubject(ALL_HOSTS), JSON.stringify({ snapshot: scope })).catch((err) => this.opts.log?.(`replica: snapshot request failed: ${(err as Error).message}`));
  }

  private async applyLoop(): Promise<void> {
    while (!this.closed) {
      try {
        const consumer = await this.link.js.consumers.get(CHANGES_STREAM, REPLICA_CONSUMER);
        this.messages = await consumer.consume({ max_messages: 256 });
        for await (const m of this.messages) {
          const s = parseChangeSubject(m.subject);
          if (m.seq > this.expected) this.askSnapshot({}, `records ${this.expected}..${m.seq - 1} are gone from the stream (retention)`);
          this.expected = Math.max(this.expected, m.seq + 1);
          try {
            if (!s) throw new Error(`unexpected subject ${m.subject}`);
            const rec = decodeRecord(m.headers, m.data, s.projectId, s.taskToken);
            if (!admitRecord(this.floors, s.host, s.projectId, s.taskToken, rec)) {
              const floor = this.floors.floor(s.projectId, s.taskToken);
              this.opts.log?.(`replica: record ${m.seq} (${rec.op} ${rec.path}) of host ${s.host} dropped: stale owner epoch ${rec.epoch ?? 0}, the task was claimed since (epoch ${floor})`);
              this.opts.onApplied?.({ host: s.host, path: rec.path, applied: false });
              m.ack();
              continue;
            }
            const applied = applyRecord(this.root, rec);
            // a claim record raises the epoch only: the claimant replays the task before it can take
            // writes, and its first file record makes it the owner (and brings it the unconfirmed writes)
            if (s.taskToken !== PROJECT_TOKEN && rec.op !== 'claim') {
              this.owners.set(`${s.projectId}/${s.taskToken}`, s.host);
              this.pending.delete(s.projectId, s.taskToken);
              this.resendTo(s.host, this.inflight.takeOver(s.projectId, s.taskToken, s.host));
            }
            this.opts.onApplied?.({ host: s.host, path: rec.path, applied });
          } catch (err) {
            this.opts.log?.(`replica: record ${m.seq} dropped: ${(err as Error).message}`);
            if (s && s.taskToken !== PROJECT_TOKEN && err instanceof ScaleoutError && err.code === 'GAP') this.askSnapshot({ projectId: s.projectId, taskId: s.taskToken }, 'a record is missing');
          }
          m.ack();
        }
      } catch (err) {
        if (!this.closed) this.opts.log?.(`replica: ${(err as Error).message}; retrying`);
      }
      if (!this.closed) await new Promise((r) => setTimeout(r, 250));
    }
  }
}
