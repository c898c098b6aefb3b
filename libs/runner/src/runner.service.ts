import type { OnApplicationShutdown } from '@nestjs/common';
import type { AgentRegistry } from '@app/agents';
import type { BusWriters } from '@app/messagebus';
import type { LivenessProbe, StorageIndexFactory } from '@app/storage';
import type { AgentExecutor } from './agent-executor';
import { JobOptions, JobResult, runJob } from './job';
import { createTaskDispatcher, type RunnerModuleOptions } from './runner.providers';
import { signalStopReason, stopRun, stopTask, StopOptions, StopRunResult, StopTaskOptions, StopTaskResult } from './stop';
import { runTask } from './task';
import type { TaskOptions, TaskResult } from './task-options';
import type { TaskDispatcher } from './task-dispatcher';
import { checkStartTask, startTask, type CheckedTaskStart, type StartedTask, type TaskStartRequest, type TaskStartWrite } from './tasks';
import type { WebhookSender } from '@app/webhook';

/** Injected parts every job/task started here runs with (unless the caller passes its own). */
export interface RunnerSeams {
  executor?: AgentExecutor;
  registry?: AgentRegistry;
  /** The app's one liveness probe (LIVENESS_PROBE): the loops and the start checks judge runs with it. */
  probe: LivenessProbe;
  /** MessageBusService.writers: the loops write the task and project buses through it. */
  writers: BusWriters;
  /** STORAGE_INDEX_FACTORY: every job and loop takes its runs root's layout from it. */
  indexFor: StorageIndexFactory;
  /** The injected WebhookService delivers run_stop (D14). */
  webhookSender?: WebhookSender;
}

/**
 * Injectable facade over the engine: every job and task started through it runs with the
 * injected AgentExecutor, AgentRegistry and LivenessProbe. It tracks what it started so that a
 * CLI shutdown (SIGINT/SIGTERM) stops every agent process group before the process exits.
 * A plain class (no NestJS import, so `run-agent task` never loads @nestjs/common): RunnerModule
 * provides it through createRunnerService, the CLI's plain composition root calls that directly.
 */
export class RunnerService implements OnApplicationShutdown {
  readonly dispatcher: TaskDispatcher;
  private readonly active = new Map<AbortController, Promise<unknown>>();
  private readonly seams: RunnerSeams;

  constructor(
    seams: RunnerSeams,
    private readonly options: RunnerModuleOptions = { stopOnShutdown: true },
  ) {
    this.seams = { ...seams };
    this.dispatcher = createTaskDispatcher((opts) => this.runTask(opts));
  }

  runJob(opts: JobOptions): Promise<JobResult> {
    return this.track(opts, (signal) => runJob({ ...this.withSeams(opts), writers: opts.writers ?? this.seams.writers, indexFor: opts.indexFor ?? this.seams.indexFor, signal }));
  }

  runTask(opts: TaskOptions): Promise<TaskResult> {
    return this.track(opts, (signal) => runTask({ ...this.withSeams(opts), probe: opts.probe ?? this.seams.probe, writers: opts.writers ?? this.seams.writers, indexFor: opts.indexFor ?? this.seams.indexFor, signal }));
  }

  /** The start-a-task use case's checks (libs/runner/src/tasks/start-task.ts) with the injected liveness probe; writes nothing. */
  checkStartTask(req: TaskStartRequest): Promise<CheckedTaskStart> {
    return checkStartTask({ ...req, probe: req.probe ?? this.seams.probe });
  }

  /** Starts a task on this host: checks, TASK.md and the other task files once, the first run's folder, the thread link. */
  startTask(req: TaskStartWrite): Promise<StartedTask> {
    return startTask({ ...req, probe: req.probe ?? this.seams.probe });
  }

  stopRun(runDir: string, opts?: StopOptions): Promise<StopRunResult> {
    return stopRun(runDir, opts);
  }

  stopTask(taskDir: string, opts?: StopTaskOptions): Promise<StopTaskResult> {
    return stopTask(taskDir, opts);
  }

  /** Number of jobs/tasks started through this service that are still running. */
  get activeCount(): number {
    return this.active.size;
  }

  /** Stops everything started here and waits for the agents to be gone. */
  async stopAll(reason: string): Promise<void> {
    const pending = [...this.active.entries()];
    for (const [controller] of pending) controller.abort(reason);
    await Promise.allSettled(pending.map(([, p]) => p));
  }

  async onApplicationShutdown(signal?: string): Promise<void> {
    if (this.options.stopOnShutdown === false) return;
    await this.stopAll(signal ? signalStopReason(signal) : 'runner shutdown');
  }

  private withSeams<T extends Partial<RunnerSeams>>(opts: T): T {
    const out = { ...opts };
    for (const key of Object.keys(this.seams) as (keyof RunnerSeams)[]) {
      if (out[key] === undefined && this.seams[key] !== undefined) (out as RunnerSeams)[key] = this.seams[key] as never;
    }
    return out;
  }

  private track<T>(opts: { signal?: AbortSignal }, start: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const signal = opts.signal ? AbortSignal.any([controller.signal, opts.signal]) : controller.signal;
    const promise = start(signal).finally(() => this.active.delete(controller));
    this.active.set(controller, promise);
    return promise;
  }
}
