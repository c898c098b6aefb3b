import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BusError, readMessages, type BusMessage, type BusParent, type BusWriters } from '@app/messagebus';
import { answerQuestion, RunnerError, stopRun, stopTask, wakeTask } from '@app/runner';
import { clearStopMarkers, removeDone, type RunsLayout, StorageError, validateProjectId, validateRunId, validateTaskId, writeDone } from '@app/storage';
import { ScaleoutError } from './subjects';
import { appliedResult, recordApplied } from './applied-writes';

/**
 * Every write the server makes to an existing task's files. Without --nats they are applied to
 * the local runs root; with --nats they go to the worker that owns the task (the only writer of
 * its files) and come back through the change stream (docs/scale-out.md "Task writes").
 */
export type TaskWrite = { projectId: string; taskId: string } & (
  | { op: 'post'; type: string; runId?: string; body: string; parents?: BusParent[]; meta?: Record<string, string>; maxBodyBytes?: number }
  | { op: 'answer'; body: string; questionId?: string }
  | { op: 'wake'; body: string; type?: string }
  /** Removes DONE and the stop markers (POST …/resume). */
  | { op: 'resume' }
  /** Writes DONE, so the loop does not start again (DELETE /api/v1/tasks/{id}). */
  | { op: 'done' }
  | { op: 'stop-run'; runId: string; stoppedBy: string; graceMs?: number }
  | { op: 'stop-task'; stoppedBy: string; graceMs?: number }
);

export interface TaskWriteResult {
  /** The bus message a post, answer or wake appended. */
  message?: { msg_id: string; ts: string };
  /** answer: the questions it answered. */
  answered?: string[];
  /** resume / wake: DONE was there and is removed. */
  reopened?: boolean;
  /** wake: a Ralph loop holds the task (no new loop needed). */
  loopRunning?: boolean;
  /** wake: the configured agent (name) of the latest root run. */
  agent?: string;
  /** wake: working directory of the latest root run. */
  cwd?: string;
  /** A routed write sent again: applied earlier under the same write id, this is that result. */
  duplicate?: boolean;
}
/** Applies task writes: `LocalTaskWrites` here, `ScaleoutServer` on the owning worker. */
export interface TaskWrites {
  apply(write: TaskWrite): Promise<TaskWriteResult>;
}

/** Meta key that marks a message appended by a routed write, so a redelivered write appends nothing. */
export const WRITE_ID_META = 'conductor_write_id';

const OPS = ['post', 'answer', 'wake', 'resume', 'done', 'stop-run', 'stop-task'];
const str = (v: unknown): v is string => typeof v === 'string';

/** The one validator of routed writes (their ids become paths on the worker). */
export function decodeTaskWrite(o: unknown): TaskWrite {
  const w = o as Record<string, unknown>;
  const bad = (why: string) => new ScaleoutError('INVALID_TASK', `invalid task write: ${why}`);
  if (!w || typeof w !== 'object' || !OPS.includes(w.op as string)) throw bad('unknown op');
  try {
    validateProjectId(w.projectId as string);
    validateTaskId(w.taskId as string);
    if (w.runId !== undefined && !(w.op === 'post' && w.runId === '')) validateRunId(w.runId as string);
  } catch (err) {
    throw bad((err as Error).message);
  }
  if (['post', 'answer', 'wake'].includes(w.op as string) && !str(w.body)) throw bad('body must be a string');
  if (w.op === 'post' && !str(w.type)) throw bad('type must be a string');
  if (w.op === 'stop-run' && !str(w.runId)) throw bad('stop-run needs a runId');
  if (String(w.op).startsWith('stop') && !str(w.stoppedBy)) throw bad('stoppedBy must be a string');
  const optional = (k: string, ok: (v: unknown) => boolean) => {
    if (w[k] !== undefined && !ok(w[k])) throw bad(`${k} has the wrong type`);
  };
  const count = (v: unknown) => Number.isInteger(v) && (v as number) >= 0;
  optional('questionId', str);
  optional('type', str);
  optional('graceMs', count);
  optional('maxBodyBytes', count);
  optional('parents', (v) => Array.isArray(v) && v.every((p) => p && typeof p === 'object' && str((p as BusParent).msg_id)));
  optional('meta', (v) => !!v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every(str));
  return w as unknown as TaskWrite;
}

const brief = (m: BusMessage) => ({ msg_id: m.msg_id, ts: m.ts.toISOString() });

function findWritten(busPath: string, writeId: string): BusMessage | undefined {
  return existsSync(busPath) ? readMessages(busPath).find((m) => m.meta?.[WRITE_ID_META] === writeId) : undefined;
}

/** What applies a write: the runs root's layout and the bus-writer factory (of the composition root). */
export interface TaskWriteParts {
  layout: RunsLayout;
  writers: BusWriters;
}

/**
 * Applies one write to the task's files under the layout's root (the only place that does). A routed write
 * (`writeId`) is applied once: its id and result are recorded in the task's APPLIED-WRITES.json
 * (and in an appended message's meta), so the same write sent again is answered with the earlier
 * result instead of being applied twice.
 */
export async function applyTaskWrite(parts: TaskWriteParts, w: TaskWrite, writeId?: string): Promise<TaskWriteResult> {
  if (!writeId) return applyOnce(parts, w);
  const taskDir = parts.layout.taskDir(w.projectId, w.taskId);
  const earlier = appliedResult(taskDir, writeId);
  if (earlier) return { ...earlier, duplicate: true };
  const result = await applyOnce(parts, w, writeId);
  recordApplied(taskDir, writeId, w.op, result);
  return result;
}

async function applyOnce({ layout, writers }: TaskWriteParts, w: TaskWrite, writeId?: string): Promise<TaskWriteResult> {
  const taskDir = layout.taskDir(w.projectId, w.taskId);
  const busPath = layout.taskBus(w.projectId, w.taskId);
  const meta = writeId ? { [WRITE_ID_META]: writeId } : undefined;
  const earlier = writeId && ['post', 'answer', 'wake'].includes(w.op) ? findWritten(busPath, writeId) : undefined;
  if (earlier) return { message: brief(earlier), answered: w.op === 'answer' ? (earlier.parents ?? []).map((p) => p.msg_id) : undefined };
  switch (w.op) {
    case 'post': {
      mkdirSync(dirname(busPath), { recursive: true });
      const msg = await writers(busPath, { maxBodyBytes: w.maxBodyBytes }).append({
        type: w.type,
        project_id: w.projectId,
        task_id: w.taskId,
        run_id: w.runId ?? '',
        parents: w.parents,
        meta: meta || w.meta ? { ...w.meta, ...meta } : undefined,
        body: w.body,
      });
      return { message: brief(msg) };
    }
    case 'answer': {
      const { answer, questions } = await answerQuestion({ busPath, writers, taskDir, projectId: w.projectId, taskId: w.taskId, body: w.body, questionId: w.questionId, meta });
      return { message: brief(answer), answered: questions.map((q) => q.msg_id) };
    }
    case 'wake': {
      const r = await wakeTask({ layout, writers, projectId: w.projectId, taskId: w.taskId, body: w.body, type: w.type, meta });
      return { message: brief(r.message), reopened: r.reopened, loopRunning: r.loopRunning, agent: r.agent, cwd: r.cwd };
    }
    case 'resume': {
      const reopened = removeDone(taskDir);
      if (reopened) clearStopMarkers(taskDir);
      return { reopened };
    }
    case 'done':
      writeDone(taskDir);
      return {};
    case 'stop-run':
      await stopRun(layout.runDir(w.projectId, w.taskId, w.runId), { graceMs: w.graceMs, stoppedBy: w.stoppedBy });
      return {};
    case 'stop-task':
      await stopTask(taskDir, { graceMs: w.graceMs, stoppedBy: w.stoppedBy });
      return {};
  }
}

/** Single-host mode: writes go to this host's runs root. */
export class LocalTaskWrites implements TaskWrites {
  constructor(private readonly parts: TaskWriteParts) {}
  apply(write: TaskWrite): Promise<TaskWriteResult> {
    return applyTaskWrite(this.parts, write);
  }
}

export interface WireError {
  name: string;
  code: string;
  message: string;
}

export function toWireError(err: unknown): WireError {
  const e = err as { name?: string; code?: string; message?: string };
  return { name: e?.name ?? 'Error', code: String(e?.code ?? ''), message: e?.message ?? String(err) };
}

/** The worker's error, as the same class here (the API maps it to the same HTTP status). */
export function fromWireError(e: WireError): Error {
  switch (e.name) {
    case 'RunnerError':
      return new RunnerError(e.code as RunnerError['code'], e.message);
    case 'BusError':
      return new BusError(e.code as BusError['code'], e.message);
    case 'StorageError':
      return new StorageError(e.code as StorageError['code'], e.message);
    default:
      return new ScaleoutError('NATS', `worker: ${e.message}`);
  }
}

/** True when the task's files are on this host (a routed write for another host's task is not ours). */
export const holdsTask = (layout: RunsLayout, projectId: string, taskId: string) => existsSync(join(layout.taskDir(projectId, taskId), 'TASK.md'));
