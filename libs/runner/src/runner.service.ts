import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { JobOptions, JobResult, runJob } from './job';
import { stopRun, stopTask, StopOptions, StopRunResult } from './stop';
import { TaskOptions, TaskResult, runTask } from './task';
import { LocalTaskDispatcher, TaskDispatcher } from './task-dispatcher';

/**
 * Injectable facade over the engine. It tracks what it started so that a shutdown (SIGINT or
 * SIGTERM of the CLI, server stop) stops every agent process group before the process exits.
 */
@Injectable()
export class RunnerService implements OnApplicationShutdown {
  readonly dispatcher: TaskDispatcher = new LocalTaskDispatcher();
  private readonly active = new Map<AbortController, Promise<unknown>>();

  runJob(opts: JobOptions): Promise<JobResult> {
    return this.track(opts, (signal) => runJob({ ...opts, signal }));
  }

  runTask(opts: TaskOptions): Promise<TaskResult> {
    return this.track(opts, (signal) => runTask({ ...opts, signal }));
  }

  stopRun(runDir: string, opts?: StopOptions): Promise<StopRunResult> {
    return stopRun(runDir, opts);
  }

  stopTask(taskDir: string, opts?: StopOptions): Promise<{ stoppedRuns: number }> {
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
    await this.stopAll(signal ? `run-agent (pid ${process.pid}) received ${signal}` : 'runner shutdown');
  }

  private track<T>(opts: { signal?: AbortSignal }, start: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const signal = opts.signal ? AbortSignal.any([controller.signal, opts.signal]) : controller.signal;
    const promise = start(signal).finally(() => this.active.delete(controller));
    this.active.set(controller, promise);
    return promise;
  }
}
