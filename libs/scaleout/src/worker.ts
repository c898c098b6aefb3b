import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { JsMsg } from '@nats-io/jetstream';
import { RunnerError, type RunnerService, type TaskOptions } from '@app/runner';
import type { BusWriters } from '@app/messagebus';
import { runInfoFile, type AppConfig, type RunsLayout } from '@app/storage';
import { ChangeTailer } from './change-tailer';
import { claimTask, HeartbeatWatch, releaseClaim, type StoredClaim } from './claims';
import { recordHeaders } from './change-record';
import type { NatsAuth } from './auth';
import { connectNats, DEFAULT_LEASE_MS, syncNote, publishDurably, type NatsLink } from './nats';
import { ensureControlConsumer } from './control-consumer';
import { ensureWorkersConsumer } from './workers-consumer';
import { ackDelivery, retryThroughOutage } from './worker-acks';
import { heartbeatSubject } from './heartbeat';
import { ownEpoch, publishClaimRecord, stopIfClaimedElsewhere } from './worker-fence';
import { failOrphanRuns, replayTask } from './replay';
import { prepareQueuedTask } from './task-setup';
import { followServerPosts } from './server-posts';
import { reconcileOrphans } from './orphans';
import { ALL_HOSTS, CONTROL_STREAM, TASKS_STREAM, validateHostId, WORKERS_CONSUMER } from './subjects';
import { controlKey, decodeQueuedTask, decodeRoutedWrite, isSnapshotRequest, type QueuedTask, type RoutedWrite } from './task-message';
import { applyTaskWrite, holdsTask, toWireError, type TaskWriteResult, type WireError } from './task-writes';

export interface WorkerOptions {
  url: string;
  /** This host's runs root (its layout) and the bus-writer factory: of the composition root. */
  layout: RunsLayout;
  writers: BusWriters;
  host: string;
  /** Root tasks run at once (default 4). */
  capacity?: number;
  /** Ack wait of the queue: a task whose worker sent no heartbeat for this long goes to another worker. */
  leaseMs?: number;
  /** How often changed task files are published (default 100 ms). */
  pollMs?: number;
  config?: AppConfig;
  /** Extra runner options (tests shorten restart delays). */
  task?: Partial<TaskOptions>;
  log?: (line: string) => void;
  /** The injected RunnerService (its executor, registry, probe, webhook sender): the worker's tasks run through it. */
  runner: Pick<RunnerService, 'runTask'>;
  auth?: NatsAuth;
}

interface Active {
  msg: JsMsg;
  /** Other messages of the same task delivered while it runs here (a duplicate submission): acked with it. */
  others: JsMsg[];
  abort: AbortController;
  done: Promise<void>;
  /** This host's claim of the task, once written (CONDUCTOR_CLAIMS). */
  claim?: StoredClaim;
  /** Another host claimed the task since (this one was paused or cut off): stopped, never acked here. */
  lost?: boolean;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * `run-agent worker`: pulls root tasks from CONDUCTOR_TASKS (at most `capacity` at once), runs
 * each with the normal runner in its own runs root, keeps the lease alive with heartbeats
 * (JetStream "working" acks), publishes every change of the task's files, acks when the loop
 * ended and its last changes are stored. Stop requests arrive on CONDUCTOR_CONTROL.
 */
export class Worker {
  private link!: NatsLink;
  private tailer!: ChangeTailer;
  private readonly active = new Map<string, Active>();
  private stopping = false;
  private loops: Promise<void>[] = [];
  private ticker?: NodeJS.Timeout;
  private beat?: NodeJS.Timeout;
  private heartbeat: () => void = () => undefined;
  /** Other workers' heartbeats: is the host that claimed a redelivered task still running it? */
  private readonly watch = new HeartbeatWatch();
  /** The control messages being applied, chained per task. */
  private readonly controls = new Map<string, Promise<void>>();
  /** Tasks whose files a killed process of this worker left here: a stale copy until the queue gives them back. */
  private readonly released = new Set<string>();
  /** This process's claim epoch of each task it ran (the `Cl-Epoch` of its records, see epochs.ts). */
  private readonly epochs = new Map<string, number>();
  readonly capacity: number;
  /** The queue's ack wait once started (workers-consumer.ts): what this worker heartbeats within. */
  leaseMs: number;

  constructor(private readonly opts: WorkerOptions) {
    validateHostId(opts.host);
    this.capacity = opts.capacity ?? 4;
    if (!Number.isInteger(this.capacity) || this.capacity < 1) throw new Error(`invalid capacity ${opts.capacity}: expected an integer ≥ 1`);
    this.leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
  }

  private log(line: string): void {
    this.opts.log?.(`worker ${this.opts.host}: ${line}`);
  }

  async start(): Promise<void> {
    this.link = await connectNats(this.opts.url, `worker-${this.opts.host}`, { auth: this.opts.auth });
    this.log(syncNote(this.link.serverVersion));
    this.leaseMs = await ensureWorkersConsumer(this.link.jsm, this.opts.leaseMs, (l) => this.log(l));
    for (const key of await reconcileOrphans(this.opts.layout.root, this.opts.host)) {
      this.released.add(key);
      this.log(`stopped the orphaned runs of ${key} (left by a killed worker process; the task continues from the queue)`);
    }
    this.tailer = new ChangeTailer(this.opts.layout.root, this.opts.host, async (subject, rec, msgID) => {
      await publishDurably(this.link, subject, rec.data, { msgID, headers: recordHeaders(rec) });
    });
    await ensureControlConsumer(this.link.jsm, `control-${this.opts.host}`, (l) => this.log(l));
    const pollMs = this.opts.pollMs ?? 100;
    const tick = () => {
      this.tailer
        .pass()
        .catch((err) => this.log(`publish: ${(err as Error).message}`))
        .finally(() => {
          if (!this.stopping || this.active.size > 0) this.ticker = setTimeout(tick, pollMs);
        });
    };
    tick();
    this.watch.start(this.link.nc);
    // the server judges this host's runs alive by this heartbeat (their pids are ours)
    const beat = (this.heartbeat = () => {
      if (this.link.nc.isClosed()) return;
      this.link.nc.publish(heartbeatSubject(this.opts.host), JSON.stringify({ host: this.opts.host, tasks: [...this.active.keys()], leaseMs: this.leaseMs }));
    });
    beat();
    this.beat = setInterval(beat, Math.max(100, Math.floor(this.leaseMs / 3)));
    this.loops = [
      this.pullLoop(),
      this.controlLoop(),
      followServerPosts(this.link, this.opts.layout.root, this.opts.host, () => this.stopping, (l) => this.log(l)).catch((err) => this.log(`server posts: ${(err as Error).message}`)),
    ];
    this.log(`pulling tasks (capacity ${this.capacity}, lease ${this.leaseMs} ms)`);
  }

  /** Stops pulling, lets running tasks finish, closes the connection. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.active.values()].map((a) => a.done));
    await Promise.allSettled(this.loops);
    clearTimeout(this.ticker);
    clearInterval(this.beat);
    this.watch.stop();
    await this.link.close();
  }

  private async pullLoop(): Promise<void> {
    const consumer = await this.link.js.consumers.get(TASKS_STREAM, WORKERS_CONSUMER);
    while (!this.stopping) {
      if (this.active.size >= this.capacity) {
        await Promise.race([...this.active.values()].map((a) => a.done));
        continue;
      }
      let msg: JsMsg | null;
      try {
        msg = await consumer.next({ expires: 1000 });
      } catch {
        await sleep(250);
        continue;
      }
      if (msg) this.accept(msg);
    }
  }

  private async controlLoop(): Promise<void> {
    const consumer = await this.link.js.consumers.get(CONTROL_STREAM, `control-${this.opts.host}`);
    while (!this.stopping) {
      let msg: JsMsg | null;
      try {
        msg = await consumer.next({ expires: 1000 });
      } catch {
        await sleep(250);
        continue;
      }
      if (!msg) continue;
      const target = msg.subject.split('.')[2];
      if (target !== this.opts.host && target !== ALL_HOSTS) {
        msg.ack();
        continue;
      }
      // in order per task, concurrently across tasks (a stop waiting out its grace period must not
      // hold up a post to another task); acked once applied
      const m = msg;
      const key = controlKey(m.data);
      let later = false;
      const next: Promise<void> = (this.controls.get(key) ?? Promise.resolve())
        .then(async () => {
          later = (await this.control(m.data, target === ALL_HOSTS)) === 'later';
        })
        .catch((err) => this.log(`control: ${(err as Error).message}`))
        .finally(() => {
          // a write to a released task waits (redelivered) until the task is back here; the server re-sends it to a new owner
          if (later) m.nak(5000);
          else m.ack();
          if (this.controls.get(key) === next) this.controls.delete(key);
        });
      this.controls.set(key, next);
    }
    await Promise.allSettled([...this.controls.values()]);
  }

  /** A routed task write: applied when this host holds the task, answered on its reply subject. */
  private async control(data: Uint8Array, broadcast: boolean): Promise<'later' | void> {
    const snapshot = isSnapshotRequest(data);
    if (snapshot) return this.sendSnapshot(snapshot.snapshot);
    let routed: RoutedWrite;
    try {
      routed = decodeRoutedWrite(data);
    } catch (err) {
      const replyTo = (err as { envelope?: { replyTo?: string } }).envelope?.replyTo;
      if (replyTo && !broadcast) this.link.nc.publish(replyTo, JSON.stringify({ error: toWireError(err) }));
      throw err;
    }
    const { writeId, replyTo, write } = routed;
    const key = `${write.projectId}/${write.taskId}`;
    if (this.released.has(key) && !this.active.has(key)) return broadcast ? undefined : 'later';
    const held = holdsTask(this.opts.layout, write.projectId, write.taskId);
    // claimed here, its files not replayed yet: redelivered once they are
    if (!held && this.active.has(key)) return 'later';
    if (!held && broadcast) return; // another worker's task
    // fenced (issue #31): a host that lost the task to a newer claim applies nothing and answers
    // nothing (the server re-sends the write to the new owner)
    let epoch: number | undefined;
    if (held) {
      try {
        epoch = await ownEpoch(this.link, this.opts.host, write.projectId, write.taskId, this.epochs.get(key));
      } catch {
        return 'later'; // the claim is unreadable now (NATS reconnecting): redelivered
      }
      if (epoch === undefined || (routed.epoch !== undefined && routed.epoch > epoch)) {
        this.log(`${write.op} ${key} write ${writeId} not applied: the task was claimed by another host since (stale owner epoch ${epoch ?? this.epochs.get(key) ?? 0})`);
        return;
      }
    }
    let reply: { result?: TaskWriteResult; error?: WireError };
    try {
      if (!held) throw new RunnerError('NOT_FOUND', `task ${write.taskId} is not on worker ${this.opts.host}`);
      const result = await applyTaskWrite(this.opts, write, writeId);
      reply = { result };
      this.log(`${write.op} ${write.projectId}/${write.taskId} write ${writeId}${result.duplicate ? ' already applied (answered again)' : ' applied'}`);
    } catch (err) {
      reply = { error: toWireError(err) };
    }
    if (replyTo) this.link.nc.publish(replyTo, JSON.stringify(reply));
    if (!this.active.has(`${write.projectId}/${write.taskId}`) && held) {
      // a finished task is no longer tailed: publish what the write changed, once
      this.tailer.track(write.projectId, write.taskId, epoch);
      await this.tailer.flush();
      if (!this.active.has(`${write.projectId}/${write.taskId}`)) this.tailer.untrack(write.projectId, write.taskId);
    }
  }

  /** Sends the files of every task this host holds (or of one task) again, for a replica that missed records. */
  private async sendSnapshot(scope: { projectId?: string; taskId?: string }): Promise<void> {
    const tasks: [string, string][] = [];
    const dirs = (d: string) => (existsSync(d) ? readdirSync(d, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name) : []);
    for (const p of scope.projectId ? [scope.projectId] : dirs(this.opts.layout.root).filter((n) => !n.startsWith('.'))) {
      for (const t of scope.taskId ? [scope.taskId] : dirs(join(this.opts.layout.root, p)).filter((n) => n.startsWith('task-'))) {
        // a released task's files are a stale copy: the host that continued it sends its own
        if (holdsTask(this.opts.layout, p, t) && !this.released.has(`${p}/${t}`)) tasks.push([p, t]);
      }
    }
    for (const [p, t] of tasks) {
      const epoch = await ownEpoch(this.link, this.opts.host, p, t, this.epochs.get(`${p}/${t}`)).catch(() => this.epochs.get(`${p}/${t}`));
      if (epoch === undefined) continue; // claimed by another host since: a stale copy
      this.tailer.resend(p, t);
      this.tailer.track(p, t, epoch);
    }
    await this.tailer.flush();
    for (const [p, t] of tasks) if (!this.active.has(`${p}/${t}`)) this.tailer.untrack(p, t);
    this.log(`snapshot sent: ${tasks.length} task(s)`);
  }

  private accept(msg: JsMsg): void {
    let task: QueuedTask;
    try {
      task = decodeQueuedTask(msg.data);
    } catch (err) {
      this.log(`rejected a task message: ${(err as Error).message}`);
      msg.term();
      return;
    }
    const key = `${task.projectId}/${task.taskId}`;
    this.released.delete(key);
    const current = this.active.get(key);
    if (current) {
      // our own lease expired (a late heartbeat) and came back to us: keep running, heartbeat the new delivery
      if (msg.info.streamSequence === current.msg.info.streamSequence) current.msg = msg;
      else current.others.push(msg);
      return;
    }
    const entry: Active = { msg, others: [], abort: new AbortController(), done: Promise.resolve() };
    this.active.set(key, entry);
    entry.done = this.execute(task, entry).finally(() => {
      this.active.delete(key);
      this.heartbeat();
    });
    this.heartbeat(); // the server learns of the task now, not a beat later
  }

  private async execute(task: QueuedTask, entry: Active): Promise<void> {
    const heartbeat = setInterval(() => {
      if (entry.lost) return;
      [entry.msg, ...entry.others].forEach((m) => m.working());
      if (!this.link.nc.isClosed()) stopIfClaimedElsewhere(this.link, task, entry, (l) => this.log(l));
    }, Math.max(100, Math.floor(this.leaseMs / 3)));
    const { layout } = this.opts;
    const taskDir = layout.taskDir(task.projectId, task.taskId);
    let started = false;
    try {
      const mine = { host: this.opts.host, leaseMs: this.leaseMs };
      const outcome = await retryThroughOutage(this.link, () => claimTask(this.link, this.watch, task.projectId, task.taskId, mine));
      if ('busy' in outcome) {
        // redelivered while its holder still runs it (e.g. after a NATS restart): the holder acks it
        this.log(`task ${task.projectId}/${task.taskId} is running on ${outcome.busy}: left to it`);
        entry.msg.nak(this.leaseMs);
        return;
      }
      entry.claim = outcome.claimed;
      this.epochs.set(`${task.projectId}/${task.taskId}`, outcome.claimed.seq);
      // before any other record of this host: from here on the replica drops the previous owner's late records
      await retryThroughOutage(this.link, () => publishClaimRecord(this.link, this.opts.host, task.projectId, task.taskId, outcome.claimed));
      const takeover = entry.msg.info.deliveryCount > 1 || !existsSync(join(taskDir, 'TASK.md'));
      if (takeover) {
        const { applied: n, paths } = await retryThroughOutage(this.link, () => replayTask(this.link, this.opts.layout.root, task.projectId, task.taskId));
        this.tailer.adopt(task.projectId, task.taskId, paths);
        if (n > 0) {
          const failed = await failOrphanRuns(taskDir, this.opts.host);
          this.log(`took over ${task.projectId}/${task.taskId} (${n} records replayed, ${failed} orphan runs failed)`);
        }
      }
      await prepareQueuedTask(this.opts, taskDir, task);
      this.tailer.track(task.projectId, task.taskId, outcome.claimed.seq);
      const firstRun = layout.runDir(task.projectId, task.taskId, task.runId);
      const fresh = !existsSync(runInfoFile(firstRun));
      if (fresh) mkdirSync(firstRun, { recursive: true });
      started = true;
      // DONE after a takeover, or this very launch (its first run is here) ran already: a redelivery or a duplicate message
      if (!((takeover || !fresh) && existsSync(join(taskDir, 'DONE')))) {
        const result = await this.opts.runner.runTask({
          ...this.opts.task,
          root: this.opts.layout.root,
          projectId: task.projectId,
          taskId: task.taskId,
          prompt: task.prompt,
          config: this.opts.config,
          agent: task.agent,
          cwd: task.cwd,
          env: task.env,
          claimKind: takeover ? 'takeover' : undefined, // the owner epoch records a worker takeover (issue #31)
          // the server queued it once its dependencies were DONE on the replica (they may live on other hosts)
          dependenciesMet: true,
          resume: task.resume || !fresh,
          firstRunDir: fresh ? { runId: task.runId, dir: firstRun } : undefined,
          signal: entry.abort.signal,
        });
        this.log(`task ${task.projectId}/${task.taskId} ${result.status}${result.error ? `: ${result.error}` : ''}`);
      }
      await this.tailer.flush();
      this.tailer.untrack(task.projectId, task.taskId);
      if (!entry.lost) await ackDelivery(entry, (l) => this.log(l));
    } catch (err) {
      this.log(`task ${task.projectId}/${task.taskId} failed${started ? '' : ' to start'}: ${(err as Error).message}`);
      await this.tailer.flush().catch(() => undefined);
      this.tailer.untrack(task.projectId, task.taskId);
      // not started here: hand it back to the queue rather than dropping it
      if (entry.lost) return;
      if (started) await ackDelivery(entry, (l) => this.log(l));
      else entry.msg.nak(1000);
    } finally {
      clearInterval(heartbeat);
      // the loop ended here (or never started): the next delivery of the task claims it at once
      if (entry.claim && !entry.lost) await releaseClaim(this.link, task.projectId, task.taskId, entry.claim).catch((err) => this.log(`release claim: ${(err as Error).message}`));
    }
  }
}
