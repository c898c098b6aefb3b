import type { BusWriters } from '@app/messagebus';
import type { AppConfig, OwnerFence, RunInfo, StorageIndexFactory } from '@app/storage';
import type { AgentRegistry } from '@app/agents';
import type { AgentExecutor } from './agent-executor';
import type { WebhookSender } from '@app/webhook';

export const DEFAULT_MAX_DELEGATION_DEPTH = 16;

/**
 * The environment a run's checks and probes see: the inherited one (`baseEnv`, the task
 * supervisor's client's; else this process's) under the caller's additions (`env`).
 */
export function inheritedEnv(opts: { baseEnv?: NodeJS.ProcessEnv; env?: NodeJS.ProcessEnv }): NodeJS.ProcessEnv {
  return { ...(opts.baseEnv ?? process.env), ...opts.env };
}

/** What one run itself runs with: the request, and the bus-writer and index factories of its composition root (no default). */
export type JobRun = JobOptions & { writers: BusWriters; indexFor: StorageIndexFactory };

export interface JobOptions {
  root: string;
  projectId: string;
  taskId: string;
  prompt: string;
  config?: AppConfig;
  agent?: string;
  cwd?: string;
  /** run-info.yaml fields of a run in a git worktree (the worktree is `cwd`). */
  worktree?: { worktree: string; branch: string; base_commit: string };
  parentRunId?: string;
  /** The parent run's task folder when known (JRUN_TASK_FOLDER): the fan-out governor finds the parent without a scan. */
  parentTaskDir?: string;
  /** `--no-wait`: a child beyond max_children_per_run is refused (FANOUT_LIMIT) instead of queued (issue #33). */
  noWait?: boolean;
  previousRunId?: string;
  /** Idle-output timeout (CLI agents) or total deadline (REST agents); 0/undefined = none. */
  idleTimeoutMs?: number;
  conductorUrl?: string;
  runDir?: { runId: string; dir: string };
  env?: Record<string, string>;
  /** The environment the run inherits (default: this process's; the task supervisor passes its client's). */
  baseEnv?: NodeJS.ProcessEnv;
  /** The pending-child marker of the `job` that started this run (pending-child.ts), removed once the run's record exists. */
  pendingMarker?: string;
  /** Aborting stops the agent's process group (SIGTERM, grace, SIGKILL). */
  signal?: AbortSignal;
  /** Prefix the prompt with the restart text (Ralph attempts > 0, resume mode). */
  restart?: boolean;
  executor?: AgentExecutor;
  /** Resolves agent specs and versions (RunnerService passes the injected one). */
  registry?: AgentRegistry;
  /** Delivers run_stop instead of deliverWebhook(config.webhook) (the injected WebhookService). */
  webhookSender?: WebhookSender;
  /** The caller's bus-writer factory; RunnerService passes MessageBusService.writers when this is unset. */
  writers?: BusWriters;
  /** The runs root's layout comes from its index (STORAGE_INDEX_FACTORY); RunnerService passes the injected one when this is unset. */
  indexFor?: StorageIndexFactory;
  maxDelegationDepth?: number;
  /** Grace between SIGTERM and SIGKILL when aborted (default 30 s). */
  stopGraceMs?: number;
  /** Webhook retry sleeps (tests shorten them). */
  webhookBackoffMs?: number[];
  /** Skip the agent watchdog: the agent keeps running if this process dies (the server; issue #11). */
  outliveRunner?: boolean;
  /** Poll interval while queued for a max_concurrent_runs slot. */
  slotPollMs?: number;
  /** Poll interval while waiting for defaults.min_available_memory (default 1 s). */
  memoryPollMs?: number;
  /** Continue this agent session (resume_mode: continue): claude/gemini `--resume <id>`, `codex exec resume <id>`. */
  resumeSessionId?: string;
  /** Queue for a max_concurrent_runs slot at this place (the ticket of an earlier grant, after a rate-limit wait). */
  queueTicket?: number;
  /** The task loop's owner fence (issue #31): the run's run-info and bus records are written as that owner's. */
  fence?: OwnerFence;
  /**
   * A root job run on its own (`run-agent job`, no loop, no parent run): it owns the task like a
   * loop while it runs (TASK.lock with its lease, an owner epoch claimed as `job`), so its writes
   * are fenced (root-job-owner.ts). Ignored with `fence` or `parentRunId`.
   */
  ownTask?: boolean;
}

export interface JobResult {
  runId: string;
  runDir: string;
  /** Absent when the job failed before its run folder got a run-info.yaml. */
  info?: RunInfo;
  ok: boolean;
  error?: string;
  /** D1: no restart can fix this (binary missing, unknown type, bad config, permission denied). */
  fatal?: boolean;
  /** The RunnerError code when the job was refused before it ran (DEPTH_LIMIT, FANOUT_LIMIT, …). */
  code?: string;
  /** Settles when the run_stop webhook is delivered or given up (false); undefined when not configured. */
  webhook?: Promise<boolean>;
  /** The slot-queue ticket this run was granted with (max_concurrent_runs set). */
  queueTicket?: number;
}
