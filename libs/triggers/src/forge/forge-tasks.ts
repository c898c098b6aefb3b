import type { TaskStartRequest, TaskStartResult } from '../task-starter';

/**
 * What the GitHub adapter asks of the app (the API provides it with its own services): start a
 * task, post to its bus and wake it, send it to needs_input, stop it.
 */
export interface ForgeTasks {
  start(req: TaskStartRequest): Promise<TaskStartResult>;
  /** Posts `body` to the task's bus and wakes the task (a loop is started when none holds it). */
  wake(projectId: string, taskId: string, type: string, body: string): Promise<void>;
  /** Opens a question on the task (it goes to needs_input; the needs_input webhook fires). */
  needsInput(projectId: string, taskId: string, body: string): Promise<void>;
  /** Stops the task (as DELETE /api/v1/tasks/<id>). */
  stop(projectId: string, taskId: string, reason: string): Promise<void>;
}

export const FORGE_TASKS = Symbol('FORGE_TASKS');
