import type { IsolationRequest } from '@app/worktree';

/** One root task to run: the pre-allocated first run folder plus what POST /api/v1/tasks received. */
export interface LaunchRequest {
  projectId: string;
  taskId: string;
  runId: string;
  runDir: string;
  prompt: string;
  agentType: string;
  config?: Record<string, string>;
  projectRoot?: string;
  attachMode?: string;
  /** `isolation: worktree` of POST /api/v1/tasks. */
  isolation?: IsolationRequest;
  /** Server restart (issue #11): wait for a live agent of the interrupted loop, then continue. */
  adopt?: boolean;
}

/** Runs a task loop (runTask with firstRunDir); the promise settles when the loop ends. */
export interface TaskLauncher {
  launch(req: LaunchRequest): Promise<void>;
}

export const TASK_LAUNCHER = Symbol('TASK_LAUNCHER');
