/**
 * The flags of `run-agent job`, declared once for JobCommand and the Nest-free hot path
 * (apps/cli/src/fast). Plain module: no NestJS imports.
 */
import type { FlagSpec } from '@app/boot';
import type { RunFlags } from './job-common';
import { WORKTREE_FLAGS } from './loop-flags';
import { SCOPE_FLAGS } from './support/scope-flags';

/** `job`'s own flags (it also takes SCOPE_FLAGS and WORKTREE_FLAGS from its base classes). */
export const JOB_OWN_FLAGS = {
  doneWhen: { flags: '--done-when <command>', type: 'string', multiple: true, description: 'completion criterion (repeatable): a shell command run in the task\'s working tree when this job\'s agent writes DONE; a failure sets DONE aside and the job fails (stored in TASK-SETTINGS.yaml)' },
  doneTimeout: { flags: '--done-timeout <duration>', type: 'string', description: 'timeout of each --done-when command (default: defaults.done_criteria_timeout, 10m)' },
  maxTokens: { flags: '--max-tokens <n>', type: 'string', description: 'budget of this job\'s tree (the run and its child runs): input + output tokens; crossing it stops the tree and posts BUDGET_EXCEEDED' },
  maxCostUsd: { flags: '--max-cost-usd <usd>', type: 'string', description: 'budget of this job\'s tree in US dollars, as reported by the agents' },
  maxWallTime: { flags: '--max-wall-time <duration>', type: 'string', description: 'budget of this job\'s tree in wall time' },
  agent: { flags: '--agent <name>', type: 'string', description: 'config agent name or agent type: claude, codex, gemini, perplexity, xai (default: diversification policy, defaults.agent, first configured agent)' },
  prompt: { flags: '--prompt <text>', type: 'string', multiple: true, description: 'prompt text' },
  promptFile: { flags: '--prompt-file <file>', type: 'string', multiple: true, description: 'read the prompt from this file (wins over --prompt)' },
  cwd: { flags: '--cwd <dir>', type: 'string', description: 'working directory of the agent (default: the task folder)' },
  conductorUrl: { flags: '--conductor-url <url>', type: 'string', description: 'conductor server URL given to the agent as JRUN_CONDUCTOR_URL (default: from config api.host/api.port)' },
  parentRunId: { flags: '--parent-run-id <id>', type: 'string', description: 'parent run id, making this a child run (default: $JRUN_ID)' },
  noWait: { flags: '--no-wait', type: 'boolean', description: 'a child beyond the parent\'s max_children_per_run is refused (exit 2) instead of queued until a place is free' },
  previousRunId: { flags: '--previous-run-id <id>', type: 'string', description: 'run id this run continues (restart chain)' },
  runId: { flags: '--run-id <id>', type: 'string', description: 'run id of this run (default: generated); its run folder may exist already but must hold no run yet (`run-agent mcp` starts sub-tasks so)' },
  timeout: { flags: '--timeout <duration>', type: 'string', description: 'kill the agent after this long without output (Go duration, e.g. 30m; REST agents: total deadline; default: none)' },
  follow: { flags: '-f, --follow', type: 'boolean', description: 'print the agent output while it runs' },
} as const satisfies Record<string, FlagSpec>;

/** Every flag `job` takes. */
export const JOB_FLAGS = { ...SCOPE_FLAGS, ...WORKTREE_FLAGS, ...JOB_OWN_FLAGS } as const satisfies Record<string, FlagSpec>;

export interface JobFlags extends Omit<RunFlags, 'prompt' | 'promptFile'> {
  task?: string;
  // Collected as lists; the last one wins.
  prompt?: string[];
  promptFile?: string[];
  parentRunId?: string;
  previousRunId?: string;
  runId?: string;
  follow?: boolean;
  worktree?: boolean;
  repo?: string;
  base?: string;
  paths?: string[];
  maxTokens?: string;
  maxCostUsd?: string;
  maxWallTime?: string;
  doneWhen?: string[];
  doneTimeout?: string;
  /** --no-wait: `noWait` on the plain root, `wait: false` as commander names a negated flag */
  noWait?: boolean;
  wait?: boolean;
}
