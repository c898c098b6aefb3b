import { JobResult, validateTaskSettings, withJobCriteria, type RunnerService } from '@app/runner';
import type { BusWriters } from '@app/messagebus';
import type { AppConfig, RunsLayout } from '@app/storage';
import type { SubTaskRequest, SubTaskStarted, SubTaskStarter } from './mcp.types';
import { preflightSubTask } from './sub-task-preflight';

export interface JobStarterOptions {
  /** The runs root's layout (of the composition root). */
  layout: RunsLayout;
  /** The bus-writer factory (of the composition root): the completion criteria's verdict goes to the task bus. */
  writers: BusWriters;
  config?: AppConfig;
  /** Extra environment for the agents (the CLI passes CONDUCTOR_CONFIG on, as `run-agent job` does). */
  env?: Record<string, string>;
  conductorUrl?: string;
  /** Aborting stops every job started here (the CLI aborts on SIGTERM/SIGINT). */
  signal?: AbortSignal;
  /** The injected RunnerService (its executor, registry, probe, index, webhook sender). */
  runner: Pick<RunnerService, 'runJob'>;
}

/**
 * `task_start` for `run-agent mcp`: one agent run in this process, exactly what `run-agent job
 * --project P --task T --agent A --prompt …` runs as a child of the calling run. Everything that
 * can refuse the job (ids, prompt, working directory, agent, binary) is checked before the run
 * folder is created, so a refused call changes nothing on disk.
 */
export class JobStarter implements SubTaskStarter {
  private readonly active = new Map<string, Promise<JobResult>>();
  private readonly failures = new Map<string, string>();

  constructor(private readonly opts: JobStarterOptions) {}

  async start(req: SubTaskRequest): Promise<SubTaskStarted> {
    const { layout, taskId, key, cwd } = await preflightSubTask(req, this.opts, (k) => this.active.has(k));
    const runDir = layout.allocateRunDir(req.projectId, taskId);
    this.failures.delete(key);
    const criteria = validateTaskSettings({ done_criteria: req.doneCriteria, done_criteria_timeout: req.doneCriteriaTimeout });
    const start = () => this.opts.runner.runJob({
      root: layout.root,
      projectId: req.projectId,
      taskId,
      prompt: req.prompt,
      config: this.opts.config,
      agent: req.agent,
      cwd,
      parentRunId: req.parentRunId,
      conductorUrl: this.opts.conductorUrl,
      env: this.opts.env,
      runDir,
      signal: this.opts.signal,
      writers: this.opts.writers,
    });
    // a DONE written by this job counts only once the task's completion criteria pass (issue #33)
    const checked = withJobCriteria(
      {
        layout,
        writers: this.opts.writers,
        projectId: req.projectId,
        taskId,
        cwd: cwd ?? layout.taskDir(req.projectId, taskId),
        env: this.opts.env ?? {},
        config: this.opts.config,
        doneCriteria: criteria.done_criteria,
        doneCriteriaTimeoutMs: criteria.done_criteria_timeout_ms,
      },
      start,
    );
    const job = checked.then((c) => c.result);
    this.active.set(key, job);
    void checked
      .then(({ result: r, rejected }) => {
        if (!r.ok && !r.info) this.failures.set(key, r.error ?? 'agent execution failed');
        else if (rejected) this.failures.set(key, rejected);
      })
      .catch((err: unknown) => this.failures.set(key, err instanceof Error ? err.message : String(err)))
      .finally(() => this.active.delete(key));
    return { project_id: req.projectId, task_id: taskId, run_id: runDir.runId, status: 'started' };
  }

  isActive(projectId: string, taskId: string): boolean {
    return this.active.has(`${projectId}/${taskId}`);
  }

  failure(projectId: string, taskId: string): string | undefined {
    return this.failures.get(`${projectId}/${taskId}`);
  }

  /** Resolves when every job started here has ended. */
  async settled(): Promise<void> {
    while (this.active.size > 0) await Promise.allSettled([...this.active.values()]);
  }
}
