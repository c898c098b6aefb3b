import type { RunnerService } from '@app/runner';
import type { ScaleoutServer } from '@app/scaleout';
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

interface RunRef {
  projectId: string;
  taskId: string;
  runId: string;
  dir: string;
}

/** The injected RunnerService stops what runs on this host. */
type LocalStopper = Pick<RunnerService, 'stopRun' | 'stopTask'>;

/** Stops a run here (through the injected runner), or (with --nats) on the worker that owns its task. */
export function stopRunRouted(scaleout: ScaleoutServer | undefined, local: LocalStopper, run: RunRef, opts: { graceMs?: number; stoppedBy: string }): Promise<unknown> {
  if (scaleout) return scaleout.control({ action: 'stop', projectId: run.projectId, taskId: run.taskId, runId: run.runId, stoppedBy: opts.stoppedBy });
  return local.stopRun(run.dir, opts);
}

/** Stops a task's loop and runs here (through the injected runner), or (with --nats) on the worker that owns it. */
export function stopTaskRouted(
  scaleout: ScaleoutServer | undefined,
  local: LocalStopper,
  task: { projectId: string; taskId: string; dir: string },
  opts: { graceMs?: number; stoppedBy: string; done?: boolean },
): Promise<unknown> {
  if (scaleout) return scaleout.control({ action: 'stop', projectId: task.projectId, taskId: task.taskId, stoppedBy: opts.stoppedBy, done: opts.done });
  return local.stopTask(task.dir, opts);
}
