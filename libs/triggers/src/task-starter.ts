/** What a schedule or trigger asks the app to start: the body fields of POST /api/v1/tasks. */
export interface TaskStartRequest {
  project_id: string;
  task_id: string;
  agent_type: string;
  prompt: string;
  project_root?: string;
  isolation?: string;
  base?: string;
  /** Who started it, for the audit log (`schedule <name>`, `trigger <name>`). */
  source: string;
  /** The HTTP request that caused it, when one did (the audit log records it). */
  httpRequest?: unknown;
}

export interface TaskStartResult {
  project_id: string;
  task_id: string;
  run_id?: string;
  status: string;
}

/**
 * The app's task-start use case (the API provides it with POST /api/v1/tasks' own service), so
 * schedules and triggers start tasks exactly as the API does.
 */
export interface TaskStarter {
  start(req: TaskStartRequest): Promise<TaskStartResult>;
  /** True while the task has a running run or waits in the planner's queue. */
  isActive(projectId: string, taskId: string): boolean;
  /** Stops the task (concurrency `replace`). */
  stop(projectId: string, taskId: string): Promise<void>;
}

export const TASK_STARTER = Symbol('TASK_STARTER');

/** Why a trigger call or schedule fire was refused; the app maps `code` to its HTTP status. */
export class TriggerError extends Error {
  constructor(
    readonly code: 'UNAUTHORIZED' | 'NOT_FOUND' | 'BAD_REQUEST' | 'PAYLOAD_TOO_LARGE' | 'TOO_MANY_REQUESTS' | 'CONFLICT',
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}
