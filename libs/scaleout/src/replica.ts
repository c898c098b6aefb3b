import type { ConsumerMessages } from '@nats-io/jetstream';
import { applyRecord, decodeRecord } from './change-record';
import { connectNats, ensureConsumer, natsClient, publishDurably, type LinkOptions, type NatsLink } from './nats';
import { ALL_HOSTS, CHANGES_STREAM, controlSubject, parseChangeSubject, PROJECT_TOKEN, REPLICA_CONSUMER, taskSubject } from './subjects';
import { submissionId, type ControlMessage, type QueuedTask } from './task-message';

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
export class ScaleoutServer {
  private link!: NatsLink;
  private messages?: ConsumerMessages;
  private loop?: Promise<void>;
  private readonly owners = new Map<string, string>();
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly root: string,
    private readonly opts: LinkOptions & { log?: (line: string) => void; onApplied?: (e: ReplicaEvent) => void } = {},
  ) {}

  async start(): Promise<void> {
    this.link = await connectNats(this.url, 'conductor', this.opts);
    await ensureConsumer(this.link.jsm, CHANGES_STREAM, {
      durable_name: REPLICA_CONSUMER,
      ack_policy: natsClient().jetstream.AckPolicy.Explicit,
      deliver_policy: natsClient().jetstream.DeliverPolicy.All,
      filter_subject: 'conductor.changes.>',
    });
    this.loop = this.applyLoop();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.messages?.close();
    await this.loop?.catch(() => undefined);
    await this.link?.close();
  }

  /** Queues a root task; false when JetStream rejected it as a duplicate of the same launch. */
  async submit(task: QueuedTask): Promise<boolean> {
    const ack = await publishDurably(this.link, taskSubject(task.projectId), JSON.stringify(task), { msgID: submissionId(task) });
    return !ack.duplicate;
  }

  /** The host whose records of this task were applied last (undefined before any). */
  owner(projectId: string, taskId: string): string | undefined {
    return this.owners.get(`${projectId}/${taskId}`);
  }

  /** Sends a stop to the task's owner (to every worker when the owner is not known yet). */
  async control(msg: ControlMessage): Promise<void> {
    const host = this.owner(msg.projectId, msg.taskId) ?? ALL_HOSTS;
    await publishDurably(this.link, controlSubject(host), JSON.stringify(msg));
  }

  private async applyLoop(): Promise<void> {
    while (!this.closed) {
      try {
        const consumer = await this.link.js.consumers.get(CHANGES_STREAM, REPLICA_CONSUMER);
        this.messages = await consumer.consume({ max_messages: 256 });
        for await (const m of this.messages) {
          const s = parseChangeSubject(m.subject);
          try {
            if (!s) throw new Error(`unexpected subject ${m.subject}`);
            const rec = decodeRecord(m.headers, m.data, s.projectId, s.taskToken);
            const applied = applyRecord(this.root, rec);
            if (s.taskToken !== PROJECT_TOKEN) this.owners.set(`${s.projectId}/${s.taskToken}`, s.host);
            this.opts.onApplied?.({ host: s.host, path: rec.path, applied });
          } catch (err) {
            this.opts.log?.(`replica: record ${m.seq} dropped: ${(err as Error).message}`);
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
