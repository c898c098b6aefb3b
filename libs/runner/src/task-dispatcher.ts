import type { TaskOptions, TaskResult } from './task-options';

export interface DispatchedTask {
  projectId: string;
  taskId: string;
  /** Aborting stops the task's agent group and ends its loop. */
  abort(reason?: string): void;
  result: Promise<TaskResult>;
}

/**
 * Where a root task (its Ralph loop and sub-agent tree) runs. The local dispatcher runs it in
 * this process; a distributed one would hand it to a worker host.
 */
export interface TaskDispatcher {
  dispatch(opts: TaskOptions): DispatchedTask;
}

/** Runs one task loop here (RunnerService.runTask: the injected executor, registry and probe). */
export type TaskRunner = (opts: TaskOptions) => Promise<TaskResult>;

export class LocalTaskDispatcher implements TaskDispatcher {
  constructor(private readonly run: TaskRunner) {}

  dispatch(opts: TaskOptions): DispatchedTask {
    const controller = new AbortController();
    const signals = [controller.signal, opts.signal].filter((s): s is AbortSignal => !!s);
    const result = this.run({ ...opts, signal: AbortSignal.any(signals) });
    return {
      projectId: opts.projectId,
      taskId: opts.taskId,
      abort: (reason = 'task aborted') => controller.abort(reason),
      result,
    };
  }
}
