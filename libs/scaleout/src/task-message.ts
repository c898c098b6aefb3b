import { validateProjectId, validateRunId, validateTaskId } from '@app/storage';
import { ScaleoutError } from './subjects';

/** A root task on the work queue: what the server's launcher received plus its pre-allocated run id. */
export interface QueuedTask {
  projectId: string;
  taskId: string;
  runId: string;
  prompt: string;
  agent?: string;
  env?: Record<string, string>;
  cwd?: string;
  resume?: boolean;
}

/** Control sent back to the worker that owns a task. */
export interface ControlMessage {
  /** stop: the run (runId) or the task's loop and runs; resume: remove DONE (POST …/resume). */
  action: 'stop' | 'resume';
  projectId: string;
  taskId: string;
  runId?: string;
  stoppedBy?: string;
  /** Cancel: write DONE first, so the loop does not restart (DELETE /api/v1/tasks/{id}). */
  done?: boolean;
}

const str = (v: unknown) => typeof v === 'string';

function checkIds(o: Record<string, unknown>): void {
  try {
    validateProjectId(o.projectId as string);
    validateTaskId(o.taskId as string);
    if (o.runId !== undefined) validateRunId(o.runId as string);
  } catch (err) {
    throw new ScaleoutError('INVALID_TASK', (err as Error).message);
  }
}

/** The one validator of queue messages (their ids become folder names on the worker). */
export function decodeQueuedTask(data: Uint8Array): QueuedTask {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    throw new ScaleoutError('INVALID_TASK', 'task message is not JSON');
  }
  if (!o || typeof o !== 'object' || !str(o.runId) || !str(o.prompt)) throw new ScaleoutError('INVALID_TASK', 'task message needs projectId, taskId, runId and prompt');
  checkIds(o);
  if (o.agent !== undefined && !str(o.agent)) throw new ScaleoutError('INVALID_TASK', 'agent must be a string');
  if (o.cwd !== undefined && !str(o.cwd)) throw new ScaleoutError('INVALID_TASK', 'cwd must be a string');
  if (o.env !== undefined && (typeof o.env !== 'object' || o.env === null || Object.values(o.env).some((v) => !str(v)))) {
    throw new ScaleoutError('INVALID_TASK', 'env values must be strings');
  }
  return {
    projectId: o.projectId as string,
    taskId: o.taskId as string,
    runId: o.runId as string,
    prompt: o.prompt as string,
    agent: o.agent as string | undefined,
    env: o.env as Record<string, string> | undefined,
    cwd: o.cwd as string | undefined,
    resume: o.resume === true,
  };
}

export function decodeControl(data: Uint8Array): ControlMessage {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    throw new ScaleoutError('INVALID_TASK', 'control message is not JSON');
  }
  if (!o || (o.action !== 'stop' && o.action !== 'resume')) throw new ScaleoutError('INVALID_TASK', 'unknown control action');
  checkIds(o);
  return { action: o.action, projectId: o.projectId as string, taskId: o.taskId as string, runId: o.runId as string | undefined, stoppedBy: str(o.stoppedBy) ? (o.stoppedBy as string) : undefined, done: o.done === true };
}

/** Message id of a submission: one launch (task + first run) is queued once within the dedup window. */
export const submissionId = (t: QueuedTask) => `${t.projectId}/${t.taskId}/${t.runId}`;
