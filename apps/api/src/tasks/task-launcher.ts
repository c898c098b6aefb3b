import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { LaunchRequest, TaskLauncher } from '@app/planner';
import { RunnerService } from '@app/runner';
import { API_CONTEXT, ApiContext } from '../common/api-context';
import { MetricsService } from '../metrics/metrics.service';
import { recordStartFailure } from './launch-failure';
import { submitToQueue } from './scaleout-hooks';
import { TaskLoopEvents } from './task-loop-events';

export { TASK_LAUNCHER, type LaunchRequest, type TaskLauncher } from '@app/planner';

/** How long a launch waits for another loop of the same task to end before failing (TASK.lock). */
const LOOP_LOCK_GRACE_MS = 3000;

/** The single-host launcher: the Ralph loop runs inside this server process. */
@Injectable()
export class LocalTaskLauncher implements TaskLauncher, OnApplicationShutdown {
  private readonly logger = new Logger('tasks');
  private readonly loops = new Map<string, Set<AbortController>>();

  constructor(
    @Inject(API_CONTEXT) private readonly ctx: ApiContext,
    private readonly metrics: MetricsService,
    private readonly runner: RunnerService,
    private readonly events: TaskLoopEvents,
  ) {}

  get activeLoops(): number {
    let n = 0;
    for (const set of this.loops.values()) n += set.size;
    return n;
  }

  async launch(req: LaunchRequest): Promise<void> {
    if (this.ctx.scaleout) return submitToQueue(this.ctx.scaleout, req);
    const key = `${req.projectId}/${req.taskId}`;
    const abort = new AbortController();
    const set = this.loops.get(key) ?? new Set();
    set.add(abort);
    this.loops.set(key, set);
    const ids = { project_id: req.projectId, task_id: req.taskId, run_id: req.runId };
    this.logger.log({ msg: 'task_started', ...ids, agent: req.agentType, ...(req.adopt ? { adopted: true } : {}) });
    try {
      const result = await this.runner.runTask({
        root: this.ctx.root,
        projectId: req.projectId,
        taskId: req.taskId,
        prompt: req.prompt,
        config: this.ctx.config,
        agent: req.agentType,
        cwd: req.projectRoot,
        resume: req.attachMode === 'resume',
        isolation: req.isolation,
        adopt: req.adopt,
        // agents outlive the server on purpose; after a restart the planner adopts them (issue #11)
        outliveRunner: true,
        firstRunDir: { runId: req.runId, dir: req.runDir },
        env: req.config,
        conductorUrl: this.ctx.conductorUrl,
        stopGraceMs: this.ctx.stopGraceMs,
        signal: abort.signal,
        // a loop of this task whose run has just ended may still be posting its last messages
        lockWaitMs: LOOP_LOCK_GRACE_MS,
        onAttempt: () => this.events.emit({ projectId: req.projectId, taskId: req.taskId, kind: 'attempt_ended' }),
      });
      if (result.status === 'failed') this.failed(req, result.error ?? 'unknown error');
      else this.logger.log({ msg: 'task_finished', ...ids, status: result.status, ...(abort.signal.aborted ? { aborted: true } : {}) });
    } catch (err) {
      this.failed(req, (err as Error).message);
    } finally {
      set.delete(abort);
      if (set.size === 0) this.loops.delete(key);
      this.metrics.scanRuns();
      this.events.emit({ projectId: req.projectId, taskId: req.taskId, kind: 'loop_ended' });
    }
  }

  private failed(req: LaunchRequest, reason: string): void {
    const started = !recordStartFailure(req, reason);
    this.logger.error({ msg: started ? 'task_failed' : 'task_start_failed', project_id: req.projectId, task_id: req.taskId, run_id: req.runId, error: reason });
  }

  /** Ends this process's loops of a task (the runs themselves are stopped by stopTask). */
  abortTask(projectId: string, taskId: string): void {
    for (const a of this.loops.get(`${projectId}/${taskId}`) ?? []) a.abort();
  }

  onApplicationShutdown(): void {
    // Agents are detached and keep running on purpose (the filesystem is the truth); nothing to do.
  }
}
