// The one place the runner's seams are constructed (test/arch forbids `new` of them elsewhere).
// RunnerModule provides them; plain engine functions fall back to these factories when the
// caller passes nothing (Nest-free callers and unit tests).
import { LocalAgentExecutor, type AgentExecutor } from './agent-executor';
import { LocalTaskDispatcher, type TaskDispatcher, type TaskRunner } from './task-dispatcher';

/** Injection tokens of the runner seams (override them in a Nest testing module). */
export const AGENT_EXECUTOR = Symbol('AGENT_EXECUTOR');
export const TASK_DISPATCHER = Symbol('TASK_DISPATCHER');
export const RUNNER_OPTIONS = Symbol('RUNNER_OPTIONS');

export interface RunnerModuleOptions {
  /**
   * Stop every agent started through RunnerService when the app shuts down (the CLI: a SIGINT'ed
   * `run-agent task` takes its agents with it). The server leaves it off: its agents outlive it
   * on purpose and the planner adopts them after a restart (issue #11).
   */
  stopOnShutdown?: boolean;
}

export function createAgentExecutor(): AgentExecutor {
  return new LocalAgentExecutor();
}

export function createTaskDispatcher(run: TaskRunner): TaskDispatcher {
  return new LocalTaskDispatcher(run);
}
