import type { BusWriters } from '@app/messagebus';
import type { AgentRegistry } from '@app/agents';
import type { AppConfig, ClaimKind, LivenessProbe, StorageIndexFactory } from '@app/storage';
import type { AgentExecutor } from './agent-executor';
import type { CriteriaLoopOptions } from './criteria/loop-hooks';
import type { JobResult } from './job';
import type { NeedsInputLoopOptions } from './needs-input/loop-hooks';
import { RunnerError } from './runner.errors';
import type { UsageLoopOptions } from './usage/loop-hooks';
import type { WebhookSender } from '@app/webhook';
import type { IsolationRequest } from '@app/worktree';

export const DEFAULT_MAX_RESTARTS = 100;
export const DEFAULT_RESTART_DELAY_MS = 1000;
export const DEFAULT_CHILD_WAIT_TIMEOUT_MS = 300_000;
export const DEFAULT_CHILD_POLL_MS = 1000;
export const DEFAULT_DEPENDENCY_POLL_MS = 2000;

export interface TaskOptions extends NeedsInputLoopOptions, UsageLoopOptions, CriteriaLoopOptions {
  root: string;
  projectId: string;
  taskId: string;
  prompt?: string;
  config?: AppConfig;
  agent?: string;
  cwd?: string;
  /** Given (even empty) ⇒ replaces TASK-CONFIG.yaml; undefined ⇒ read from it. */
  dependsOn?: string[];
  /** The dependencies were judged DONE elsewhere (a scale-out worker: they live on other hosts); do not wait here. */
  dependenciesMet?: boolean;
  /** D2: at most N restarts after the first attempt (N+1 attempts); 0 runs once. */
  maxRestarts?: number;
  restartDelayMs?: number;
  childWaitTimeoutMs?: number;
  childPollIntervalMs?: number;
  dependencyPollIntervalMs?: number;
  idleTimeoutMs?: number;
  conductorUrl?: string;
  /** Resume mode: the restart prefix is used from the first attempt on. */
  resume?: boolean;
  firstRunDir?: { runId: string; dir: string };
  env?: Record<string, string>;
  /** The environment the runs inherit (default: this process's; the task supervisor passes its client's). */
  baseEnv?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  executor?: AgentExecutor;
  registry?: AgentRegistry;
  webhookSender?: WebhookSender;
  stopGraceMs?: number;
  webhookBackoffMs?: number[];
  /** The caller's liveness probe; RunnerService passes its injected one when this is unset. */
  probe?: LivenessProbe;
  /** The runs root's layout comes from its index (STORAGE_INDEX_FACTORY); RunnerService passes the injected one when this is unset. */
  indexFor?: StorageIndexFactory;
  /** The caller's bus-writer factory; RunnerService passes MessageBusService.writers when this is unset. */
  writers?: BusWriters;
  /**
   * How long to wait for another loop of this task to release <task>/TASK.lock before failing
   * (default 0: fail at once). The server uses a short grace for its own loops that are finishing.
   */
  lockWaitMs?: number;
  /** Git worktree isolation (docs/worktrees.md); config `defaults.isolation` applies when absent. */
  isolation?: IsolationRequest;
  /** A live agent of a dead runner (issue #11): wait for it and continue, instead of refusing. */
  adopt?: boolean;
  /** How this loop's owner epoch claim is recorded (default: adopt, resume or loop from the options; a scale-out worker's takeover says so). */
  claimKind?: ClaimKind;
  /** Agents keep running if this process dies (the server, whose planner adopts them). */
  outliveRunner?: boolean;
  /** Called after each attempt (benchmarks and the API use it for progress). */
  onAttempt?(result: JobResult, attempt: number): void;
}

/** What the loop itself runs with: the request, the liveness probe and the bus-writer factory of its composition root (no defaults). */
export type TaskRun = TaskOptions & { probe: LivenessProbe; writers: BusWriters; indexFor: StorageIndexFactory };

export interface TaskResult {
  status: 'done' | 'failed' | 'stopped';
  runIds: string[];
  error?: string;
}

/** The loop's timings and limits, validated, with their defaults. */
export interface TaskLimits {
  maxRestarts: number;
  restartDelayMs: number;
  childWaitMs: number;
  childPollMs: number;
  dependencyPollMs: number;
  lockWaitMs: number;
}

function nonNegative(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new RunnerError('INVALID_INPUT', `${name} must not be negative`);
  return value;
}

function positive(value: number | undefined, fallback: number): number {
  return value !== undefined && value > 0 ? value : fallback;
}

export function taskLimits(opts: TaskOptions): TaskLimits {
  return {
    maxRestarts: nonNegative(opts.maxRestarts, DEFAULT_MAX_RESTARTS, 'max restarts'),
    restartDelayMs: nonNegative(opts.restartDelayMs, DEFAULT_RESTART_DELAY_MS, 'restart delay'),
    childWaitMs: positive(opts.childWaitTimeoutMs, DEFAULT_CHILD_WAIT_TIMEOUT_MS),
    childPollMs: positive(opts.childPollIntervalMs, DEFAULT_CHILD_POLL_MS),
    dependencyPollMs: positive(opts.dependencyPollIntervalMs, DEFAULT_DEPENDENCY_POLL_MS),
    lockWaitMs: nonNegative(opts.lockWaitMs, 0, 'lock wait'),
  };
}
