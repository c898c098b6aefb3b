import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { blockedBy, writeFileAtomic } from '@app/storage';
import { decodeQueuedTask, type QueuedTask } from './task-message';

/** Where the server keeps the tasks it accepted that no worker reported yet (host-local, never replicated). */
export const heldTasksDir = (root: string) => join(root, '.conductor', 'nats-held');

export interface PendingTask {
  projectId: string;
  taskId: string;
  runId: string;
  dependsOn: string[];
  /** Dependencies not DONE on the replica yet: the task is held here, not queued. */
  blockedBy: string[];
  createdAt: Date;
}

/**
 * Tasks the server accepted that no worker has reported yet (the server writes nothing into its
 * replica): the read model shows them as queued or blocked until the first replicated record of
 * the task arrives. A task with unfinished dependencies is held here and queued once they are
 * DONE on the replica, since its worker cannot see other workers' tasks. Every pending task is
 * also kept on disk (one file per task, written before the API answers, removed once the replica
 * shows the task): a restarted server holds a held task again (it is in no queue yet) and lists a
 * queued one as queued (JetStream keeps the message).
 */
export class PendingTasks {
  private readonly tasks = new Map<string, { info: PendingTask; task: QueuedTask; held: boolean }>();
  private readonly dir: string;

  constructor(
    private readonly root: string,
    private readonly log?: (line: string) => void,
  ) {
    this.dir = heldTasksDir(root);
    this.reload();
  }

  private file(p: string, t: string): string {
    return join(this.dir, `${p}__${t}.json`);
  }

  /** Tasks held when the server stopped: held again, unless a worker has reported them since (the publish went out). */
  private reload(): void {
    if (!existsSync(this.dir)) return;
    for (const name of readdirSync(this.dir).filter((n) => n.endsWith('.json'))) {
      const path = join(this.dir, name);
      try {
        const { task, createdAt, queued } = JSON.parse(readFileSync(path, 'utf8')) as { task: unknown; createdAt: string; queued?: boolean };
        const t = decodeQueuedTask(Buffer.from(JSON.stringify(task)));
        if (existsSync(join(this.root, t.projectId, t.taskId))) {
          rmSync(path, { force: true });
          continue;
        }
        const deps = t.dependsOn ?? [];
        const info: PendingTask = { projectId: t.projectId, taskId: t.taskId, runId: t.runId, dependsOn: deps, blockedBy: blockedBy(this.root, t.projectId, deps), createdAt: new Date(createdAt) };
        if (queued === true) {
          this.tasks.set(this.key(t.projectId, t.taskId), { info: { ...info, blockedBy: [] }, task: t, held: false });
          this.log?.(`queued task ${t.projectId}/${t.taskId} kept from before the restart (in the queue until a worker takes it)`);
          continue;
        }
        this.tasks.set(this.key(t.projectId, t.taskId), { info, task: t, held: true });
        this.log?.(`held task ${t.projectId}/${t.taskId} kept from before the restart (waits for ${info.blockedBy.join(', ') || 'its next release'})`);
      } catch (err) {
        this.log?.(`held task file ${path} is unreadable, left as is: ${(err as Error).message}`);
      }
    }
  }

  private keep(task: QueuedTask, createdAt: Date, queued: boolean): void {
    mkdirSync(this.dir, { recursive: true });
    writeFileAtomic(this.file(task.projectId, task.taskId), JSON.stringify({ task, createdAt: createdAt.toISOString(), queued }));
  }

  private forget(p: string, t: string): void {
    rmSync(this.file(p, t), { force: true });
  }

  private key(p: string, t: string): string {
    return `${p}/${t}`;
  }

  /** Records a submission; true when it may be queued now, false when held for its dependencies. */
  add(task: QueuedTask): boolean {
    const deps = task.dependsOn ?? [];
    const blocked = deps.length ? blockedBy(this.root, task.projectId, deps) : [];
    const info: PendingTask = { projectId: task.projectId, taskId: task.taskId, runId: task.runId, dependsOn: deps, blockedBy: blocked, createdAt: new Date() };
    this.keep(task, info.createdAt, blocked.length === 0);
    this.tasks.set(this.key(task.projectId, task.taskId), { info, task, held: blocked.length > 0 });
    return blocked.length === 0;
  }

  /** Held tasks whose dependencies are DONE on the replica now (no longer held). */
  release(): QueuedTask[] {
    const out: QueuedTask[] = [];
    for (const e of this.tasks.values()) {
      if (!e.held) continue;
      e.info.blockedBy = blockedBy(this.root, e.info.projectId, e.info.dependsOn);
      if (e.info.blockedBy.length === 0) {
        e.held = false;
        out.push(e.task);
      }
    }
    return out;
  }

  /** A released task is in the queue now: its file says so (a crash before this republishes it under the same message id). */
  queued(p: string, t: string): void {
    const e = this.tasks.get(this.key(p, t));
    if (e && !e.held) this.keep(e.task, e.info.createdAt, true);
  }

  /** Puts a task back on hold (its publish failed): the next release retries it. */
  hold(p: string, t: string): void {
    const e = this.tasks.get(this.key(p, t));
    if (e) e.held = true;
  }

  isHeld(p: string, t: string): boolean {
    return this.tasks.get(this.key(p, t))?.held ?? false;
  }

  get(p: string, t: string): PendingTask | undefined {
    return this.tasks.get(this.key(p, t))?.info;
  }

  list(p?: string): PendingTask[] {
    return [...this.tasks.values()].map((e) => e.info).filter((i) => p === undefined || i.projectId === p);
  }

  /** The replica shows the task now (or it was cancelled before any worker took it). */
  delete(p: string, t: string): void {
    if (this.tasks.has(this.key(p, t))) this.forget(p, t);
    this.tasks.delete(this.key(p, t));
  }
}
