import { MSG_ID_PATTERN } from '@app/messagebus';
import { validateTaskSettings, type TaskSettings, type ThreadParentRef } from '@app/runner';
import { normalizeDependsOn, validateProjectId, validateRunId, validateTaskId } from '@app/storage';
import { ScaleoutError } from './subjects';
import { decodeTaskWrite, type TaskWrite } from './task-writes';

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
  /** depends_on of a new task (the server published it once they were DONE on its replica). */
  dependsOn?: string[];
  /** Budget and resume mode of a new task (TASK-SETTINGS.yaml on the worker). */
  settings?: TaskSettings;
  /** A threaded task (thread_parent): the worker writes the link file and the child's USER_REQUEST with this id. */
  thread?: ThreadLink;
}

export interface ThreadLink {
  parent: ThreadParentRef;
  /** Chosen by the server: the parent's link message (routed to the parent's owner first) names it. */
  childMsgId: string;
  linkedAt: string;
}

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/** Every field lands in a YAML file or a bus header on the worker: checked strictly. */
function decodeThreadLink(v: unknown): ThreadLink {
  const o = v as { parent?: Record<string, unknown>; childMsgId?: unknown; linkedAt?: unknown };
  const p = o?.parent;
  const isMsgId = (x: unknown) => typeof x === 'string' && MSG_ID_PATTERN.test(x);
  if (!p || typeof p !== 'object' || !isMsgId(p.msg_id) || !isMsgId(o.childMsgId) || typeof o.linkedAt !== 'string' || !TIME.test(o.linkedAt) || !['QUESTION', 'FACT'].includes(p.type as string)) {
    throw new ScaleoutError('INVALID_TASK', 'invalid thread link');
  }
  checkIds({ projectId: p.project_id, taskId: p.task_id, runId: p.run_id });
  const parent = { project_id: p.project_id, task_id: p.task_id, run_id: p.run_id, msg_id: p.msg_id, type: p.type } as ThreadParentRef;
  return { parent, childMsgId: o.childMsgId as string, linkedAt: o.linkedAt };
}

/** A task write on its way to the worker that owns the task (CONDUCTOR_CONTROL). */
export interface RoutedWrite {
  /** Unique per write: recorded in the appended message, so a redelivery appends nothing. */
  writeId: string;
  /** Core NATS subject the worker answers on (the server waits there). */
  replyTo?: string;
  /** The task's newest owner epoch the server has seen (epochs.ts): a worker holding an older claim applies nothing. */
  epoch?: number;
  write: TaskWrite;
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
  let dependsOn: string[] | undefined;
  let settings: TaskSettings | undefined;
  try {
    if (o.dependsOn !== undefined) {
      if (!Array.isArray(o.dependsOn)) throw new Error('dependsOn must be a list');
      dependsOn = normalizeDependsOn(o.taskId as string, o.dependsOn as string[]);
    }
    if (o.settings !== undefined) settings = validateTaskSettings(o.settings as Record<string, unknown>);
  } catch (err) {
    throw new ScaleoutError('INVALID_TASK', (err as Error).message);
  }
  return {
    projectId: o.projectId as string,
    taskId: o.taskId as string,
    runId: o.runId as string,
    dependsOn,
    settings,
    thread: o.thread === undefined ? undefined : decodeThreadLink(o.thread),
    prompt: o.prompt as string,
    agent: o.agent as string | undefined,
    env: o.env as Record<string, string> | undefined,
    cwd: o.cwd as string | undefined,
    resume: o.resume === true,
  };
}

/** A replica that missed records asks the workers to send these tasks' files again (all when no project). */
export interface SnapshotRequest {
  snapshot: { projectId?: string; taskId?: string };
}

export function isSnapshotRequest(data: Uint8Array): SnapshotRequest | undefined {
  let o: { snapshot?: { projectId?: unknown; taskId?: unknown } };
  try {
    o = JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    return undefined;
  }
  if (!o?.snapshot || typeof o.snapshot !== 'object') return undefined;
  const { projectId, taskId } = o.snapshot;
  try {
    if (projectId !== undefined) validateProjectId(projectId as string);
    if (taskId !== undefined) validateTaskId(taskId as string);
  } catch (err) {
    throw new ScaleoutError('INVALID_TASK', (err as Error).message);
  }
  if (taskId !== undefined && projectId === undefined) throw new ScaleoutError('INVALID_TASK', 'a snapshot of a task needs its project');
  return { snapshot: { projectId: projectId as string | undefined, taskId: taskId as string | undefined } };
}

export function decodeRoutedWrite(data: Uint8Array): RoutedWrite {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    throw new ScaleoutError('INVALID_TASK', 'control message is not JSON');
  }
  if (!o || typeof o.writeId !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(o.writeId)) throw new ScaleoutError('INVALID_TASK', 'control message needs a writeId');
  if (o.replyTo !== undefined && (typeof o.replyTo !== 'string' || !/^_INBOX\.[A-Za-z0-9_.-]{1,200}$/.test(o.replyTo))) throw new ScaleoutError('INVALID_TASK', 'invalid replyTo');
  const envelope = { writeId: o.writeId, replyTo: o.replyTo as string | undefined };
  if (o.epoch !== undefined && !(Number.isSafeInteger(o.epoch) && (o.epoch as number) > 0)) throw Object.assign(new ScaleoutError('INVALID_TASK', 'invalid epoch'), { envelope });
  try {
    return { ...envelope, ...(o.epoch !== undefined ? { epoch: o.epoch as number } : {}), write: decodeTaskWrite(o.write) };
  } catch (err) {
    // the sender still gets its answer (the refusal) instead of waiting for a timeout
    throw Object.assign(err as Error, { envelope });
  }
}

/** Message id of a submission: one launch (task + first run) is queued once within the dedup window. */
export const submissionId = (t: QueuedTask) => `${t.projectId}/${t.taskId}/${t.runId}`;

/** `<project>/<task>` of a control message ('*' for a snapshot or anything unreadable). */
export function controlKey(data: Uint8Array): string {
  try {
    const w = (JSON.parse(Buffer.from(data).toString('utf8')) as { write?: { projectId?: unknown; taskId?: unknown } }).write;
    return w ? `${String(w.projectId)}/${String(w.taskId)}` : '*';
  } catch {
    return '*';
  }
}
