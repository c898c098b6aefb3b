import { existsSync } from 'node:fs';
import { Logger } from '@nestjs/common';
import { newMessageId, type BusMessage, type BusWriters, type NewMessage } from '@app/messagebus';
import { threadParentMessage, type RunnerService, type TaskSettings, type ThreadParentRef } from '@app/runner';
import { newRunId, type RunsLayout } from '@app/storage';
import { LocalTaskWrites, ScaleoutError, type ScaleoutServer, type TaskWrite, type TaskWriteParts, type TaskWriteResult } from '@app/scaleout';
import { ApiError, conflict } from '../common/api-error';
import type { LaunchRequest } from './task-launcher';

/** `conductor --nats`: a root task goes to the work queue instead of this process. */
export async function submitToQueue(scaleout: ScaleoutServer, req: LaunchRequest): Promise<void> {
  await scaleout.submit({
    projectId: req.projectId,
    taskId: req.taskId,
    runId: req.runId,
    prompt: req.prompt,
    agent: req.agentType,
    env: req.config,
    cwd: req.projectRoot,
    resume: req.attachMode === 'resume',
  });
}

/**
 * `conductor --nats`: a new task is created by the worker that takes it, from its submission;
 * the server writes nothing into its replica. It allocates the run id (unused in the replica)
 * and lists the task as pending (queued, or held until its dependencies are DONE) until the
 * first replicated record of the task arrives.
 */
export async function queueNewTask(
  ctx: { root: string; layout: RunsLayout; writers: BusWriters; scaleout: ScaleoutServer },
  req: Omit<LaunchRequest, 'runId' | 'runDir'> & { dependsOn?: string[]; settings: TaskSettings; threadParent?: ThreadParentRef; linkedAt: string },
): Promise<{ runId: string; held: boolean }> {
  let runId = newRunId();
  for (let i = 0; existsSync(ctx.layout.runDir(req.projectId, req.taskId, runId)); i++) runId = `${newRunId()}-${i}`;
  let thread: { parent: ThreadParentRef; childMsgId: string; linkedAt: string } | undefined;
  if (req.threadParent) {
    // the parent's link names the child's message: written first, by the parent's owner (a 409 queues nothing)
    const parent = req.threadParent;
    const childMsgId = newMessageId();
    const msg = threadParentMessage(parent, { projectId: req.projectId, taskId: req.taskId, runId, prompt: req.prompt }, childMsgId);
    await applyTaskWrite(ctx, { op: 'post', projectId: parent.project_id, taskId: parent.task_id, type: msg.type, runId: msg.run_id, parents: msg.parents, meta: msg.meta, body: msg.body });
    thread = { parent, childMsgId, linkedAt: req.linkedAt };
  }
  await ctx.scaleout.submit({
    projectId: req.projectId,
    taskId: req.taskId,
    runId,
    prompt: req.prompt,
    agent: req.agentType,
    env: req.config,
    cwd: req.projectRoot,
    resume: req.attachMode === 'resume',
    dependsOn: req.dependsOn,
    settings: req.settings,
    thread,
  });
  return { runId, held: ctx.scaleout.pending.isHeld(req.projectId, req.taskId) };
}

/**
 * The one seam for writes to an existing task's files (bus posts, answers, wake, resume, DONE,
 * stops): applied to the local runs root, or with --nats by the worker that owns the task (the
 * server never writes into its replica). A worker that does not confirm is a 409.
 */
export async function applyTaskWrite(ctx: TaskWriteParts & { scaleout?: ScaleoutServer }, write: TaskWrite): Promise<TaskWriteResult> {
  if (!ctx.scaleout) return new LocalTaskWrites(ctx).apply(write);
  try {
    return await ctx.scaleout.apply(write);
  } catch (err) {
    if (err instanceof ScaleoutError) throw conflict(err.message, { task_id: write.taskId });
    throw err;
  }
}

/** With --nats: a project-bus post goes through the change stream (the replica has one writer, replication). */
export async function postProjectMessage(scaleout: ScaleoutServer, input: NewMessage, maxBodyBytes?: number): Promise<BusMessage> {
  try {
    return await scaleout.postProjectMessage(input, maxBodyBytes);
  } catch (err) {
    if (err instanceof ScaleoutError) throw conflict(err.message, { project_id: input.project_id });
    throw err;
  }
}

interface RunRef {
  projectId: string;
  taskId: string;
  runId: string;
  dir: string;
}

/** Every stop the API asks for is one server-log line (the loop's end is logged by the launcher). */
const stopLog = new Logger('tasks');

/** The injected RunnerService stops what runs on this host. */
type LocalStopper = Pick<RunnerService, 'stopRun' | 'stopTask'>;

/** Stops a run here (through the injected runner; its folder may be under an extra root), or on the worker that owns its task. */
export function stopRunRouted(scaleout: ScaleoutServer | undefined, local: LocalStopper, run: RunRef, opts: { graceMs?: number; stoppedBy: string }): Promise<unknown> {
  stopLog.log({ msg: 'run_stop', project_id: run.projectId, task_id: run.taskId, run_id: run.runId, stopped_by: opts.stoppedBy, on: scaleout ? 'worker' : 'local' });
  if (scaleout) return scaleout.apply({ op: 'stop-run', projectId: run.projectId, taskId: run.taskId, runId: run.runId, ...opts });
  return local.stopRun(run.dir, opts);
}

/** Stops a task's loop and runs here (through the injected runner), or on the worker that owns it. */
export function stopTaskRouted(scaleout: ScaleoutServer | undefined, local: LocalStopper, task: { projectId: string; taskId: string; dir: string }, opts: { graceMs?: number; stoppedBy: string }): Promise<unknown> {
  stopLog.log({ msg: 'task_stop', project_id: task.projectId, task_id: task.taskId, stopped_by: opts.stoppedBy, on: scaleout ? 'worker' : 'local' });
  if (scaleout) return scaleout.apply({ op: 'stop-task', projectId: task.projectId, taskId: task.taskId, ...opts });
  return local.stopTask(task.dir, opts);
}

/** With --nats, an imported process would run on the server host, outside every worker: refused at the door. */
export function refuseUnroutedTaskWrites(ctx: { scaleout?: ScaleoutServer }, body: { process_import?: unknown }): void {
  if (ctx.scaleout && body.process_import) {
    throw new ApiError('NOT_IMPLEMENTED', 'process_import is not supported with --nats: the process runs on the server host, whose runs root is a replica of the workers (docs/scale-out.md)');
  }
}
