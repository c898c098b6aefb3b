import type { JobOptions, JobResult } from '@app/runner';
import type { AppConfig } from '@app/storage';

/** How the orchestration commands (iterate, workflow) run their agents: the settings every job gets and the engine's runJob. */
export interface AgentRunSettings {
  agent?: string;
  config?: AppConfig;
  cwd?: string;
  env?: Record<string, string>;
  idleTimeoutMs?: number;
  signal?: AbortSignal;
  /** The engine's runJob (RunnerService.runJob in the CLI, so shutdown stops the agents). */
  runJob: (opts: JobOptions) => Promise<JobResult>;
  /** Clock of the HHMMSS suffix of sub-task ids (local time, as upstream). */
  now?: () => Date;
}
