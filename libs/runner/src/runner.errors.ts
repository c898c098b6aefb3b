/** Error codes of the execution engine; the CLI maps them to exit codes, the API to HTTP statuses. */
export type RunnerErrorCode =
  | 'INVALID_INPUT' // bad option value, empty prompt, bad id
  | 'FATAL_AGENT' // D1: binary not found, unsupported type, permission denied, invalid config
  | 'AGENT_FAILED' // the agent ran and failed (transient: the loop restarts)
  | 'DEPENDENCY_CYCLE'
  | 'DEPTH_LIMIT'
  | 'FANOUT_LIMIT' // fan-out governor: children per run / runs per task tree (issue #33)
  | 'MAX_RESTARTS'
  | 'STOPPED'
  | 'NOT_FOUND'
  | 'NOT_RUNNING'
  | 'EXTERNAL_RUN'
  | 'STOP_TIMEOUT'
  | 'TASK_LOCKED' // another process holds the task's Ralph loop (TASK.lock)
  | 'IO';

export class RunnerError extends Error {
  override readonly name = 'RunnerError';
  constructor(
    readonly code: RunnerErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export function isRunnerError(err: unknown, code?: RunnerErrorCode): err is RunnerError {
  return err instanceof RunnerError && (code === undefined || err.code === code);
}

export { errorText } from '@app/storage';
