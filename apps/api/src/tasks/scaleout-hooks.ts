import { existsSync } from 'node:fs';
import type { RunnerService, TaskSettings } from '@app/runner';
import { newRunId, type RunsLayout } from '@app/storage';
import { LocalTaskWrites, ScaleoutError, type ScaleoutServer, type TaskWrite, type TaskWriteResult } from '@app/scaleout';
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
  scaleout: ScaleoutServer,
  layout: RunsLayout,
  req: Omit<LaunchRequest, 'runId' | 'runDir'> & { dependsOn?: string[]; settings: TaskSettings },
): Promise<{ runId: string; held: boolean }> {
  let runId = newRunId();
  for (let i = 0; existsSync(layout.runDir(req.projectId, req.taskId, runId)); i++) runId = `${newRunId()}-${i}`;
  await scaleout.submit({
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
  });
  return { runId, held: scaleout.pending.isHeld(req.projectId, req.taskId) };
}

/**
 * The one seam for writes to an existing task's files (bus posts, answers, wake, resume, DONE,
 * stops): applied to the local runs root, or with --nats by the worker that owns the task (the
 * server never writes into its replica). A worker that does not confirm is a 409.
 */
export async function applyTaskWrite(ctx: { root: string; scaleout?: ScaleoutServer }, write: TaskWrite): Promise<TaskWriteResult> {
  if (!ctx.scaleout) return new LocalTaskWrites(ctx.root).apply(write);
  try {
    return await ctx.scaleout.apply(write);
  } catch (err) {
    if (err instanceof ScaleoutError) throw conflict(err.message, { task_id: write.taskId });
    throw err;
  }
}

interface RunRef {
  projectId: string;
  taskId: string;
  runId: string;
  dir: string;
}

/** The injected RunnerService stops what runs on this host. */
type LocalStopper = Pick<RunnerService, 'stopRun' | 'stopTask'>;

/** Stops a run here (through the injected runner; its folder may be under an extra root), or on the worker that owns its task. */
export function stopRunRouted(scaleout: ScaleoutServer | undefined, local: LocalStopper, run: RunRef, opts: { graceMs?: number; stoppedBy: string }): Promise<unknown> {
  if (scaleout) return scaleout.apply({ op: 'stop-run', projectId: run.projectId, taskId: run.taskId, runId: run.runId, ...opts });
  return local.stopRun(run.dir, opts);
}

/** Stops a task's loop and runs here (through the injected runner), or on the worker that owns it. */
export function stopTaskRouted(scaleout: ScaleoutServer | undefined, local: LocalStopper, task: { projectId: string; taskId: string; dir: string }, opts: { graceMs?: number; stoppedBy: string }): Promise<unknown> {
  if (scaleout) return scaleout.apply({ op: 'stop-task', projectId: task.projectId, taskId: task.taskId, ...opts });
  return local.stopTask(task.dir, opts);
}

/**
 * With --nats, a threaded task (thread_parent) would write its link and messages into the
 * replica, not on the workers that own the two tasks: refused at the door until it is routed.
 */
export function refuseUnroutedTaskWrites(ctx: { scaleout?: ScaleoutServer }, body: { thread_parent?: unknown; process_import?: unknown }): void {
  if (ctx.scaleout && body.process_import) {
    throw new ApiError('NOT_IMPLEMENTED', 'process_import is not supported with --nats: the process runs on the server host, whose runs root is a replica of the workers (docs/scale-out.md)');
  }
  if (ctx.scaleout && body.thread_parent) {
    throw new ApiError('NOT_IMPLEMENTED', 'thread_parent is not supported with --nats yet: the thread link would be written on the server, not on the workers that own the tasks (docs/scale-out.md)');
  }
}
