import { blockedBy } from '@app/storage';
import type { QueuedTask } from './task-message';

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
 * DONE on the replica, since its worker cannot see other workers' tasks. In memory: a server
 * restart forgets held tasks (docs/scale-out.md, Limits).
 */
export class PendingTasks {
  private readonly tasks = new Map<string, { info: PendingTask; task: QueuedTask; held: boolean }>();

  constructor(private readonly root: string) {}

  private key(p: string, t: string): string {
    return `${p}/${t}`;
  }

  /** Records a submission; true when it may be queued now, false when held for its dependencies. */
  add(task: QueuedTask): boolean {
    const deps = task.dependsOn ?? [];
    const blocked = deps.length ? blockedBy(this.root, task.projectId, deps) : [];
    const info: PendingTask = { projectId: task.projectId, taskId: task.taskId, runId: task.runId, dependsOn: deps, blockedBy: blocked, createdAt: new Date() };
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
    this.tasks.delete(this.key(p, t));
  }
}
