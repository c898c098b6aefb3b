import { Injectable, Logger } from '@nestjs/common';

/** A root loop of this server ended an attempt, or ended. */
export interface TaskLoopEvent {
  projectId: string;
  taskId: string;
  kind: 'attempt_ended' | 'loop_ended';
}

/**
 * What the in-process loops report (LocalTaskLauncher emits): parts that act on a task's progress
 * (the GitHub pull-request side) listen here instead of the launcher knowing them.
 */
@Injectable()
export class TaskLoopEvents {
  private readonly logger = new Logger('tasks');
  private readonly listeners = new Set<(e: TaskLoopEvent) => unknown>();

  /** Returns the function that removes the listener. */
  on(listener: (e: TaskLoopEvent) => unknown): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: TaskLoopEvent): void {
    for (const listener of this.listeners) {
      try {
        const r = listener(event);
        if (r instanceof Promise) r.catch((err: Error) => this.logger.warn(`${event.kind} listener of ${event.projectId}/${event.taskId}: ${err.message}`));
      } catch (err) {
        this.logger.warn(`${event.kind} listener of ${event.projectId}/${event.taskId}: ${(err as Error).message}`);
      }
    }
  }
}
