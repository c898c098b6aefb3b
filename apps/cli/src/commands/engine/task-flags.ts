/**
 * The flags of `run-agent task`, declared once for TaskCommand and the Nest-free hot path
 * (apps/cli/src/fast). Plain module: no NestJS imports.
 */
import type { FlagSpec } from '@app/boot';
import { LOOP_FLAGS, WORKTREE_FLAGS, type LoopFlags } from './loop-flags';
import { SCOPE_FLAGS } from './support/scope-flags';

/** `task`'s own flags (it also takes SCOPE_FLAGS, WORKTREE_FLAGS and LOOP_FLAGS from its base classes). */
export const TASK_OWN_FLAGS = {
  prompt: { flags: '--prompt <text>', type: 'string', description: 'task prompt; written to TASK.md when the task is new (default: TASK.md)' },
  promptFile: { flags: '--prompt-file <file>', type: 'string', description: 'read the prompt from this file (wins over --prompt)' },
  dependsOn: { flags: '--depends-on <task-ids>', type: 'string', multiple: true, description: 'tasks that must be DONE first (repeatable or comma-separated; replaces TASK-CONFIG.yaml; "" clears)' },
  dependencyPollInterval: { flags: '--dependency-poll-interval <duration>', type: 'string', description: 'how often to re-check dependencies (default 2s)' },
  conductorUrl: { flags: '--conductor-url <url>', type: 'string', description: 'conductor server URL given to the agent as JRUN_CONDUCTOR_URL' },
  timeout: { flags: '--timeout <duration>', type: 'string', description: 'per attempt: kill the agent after this long without output (default: none)' },
} as const satisfies Record<string, FlagSpec>;

/** Every flag `task` takes. */
export const TASK_FLAGS = { ...SCOPE_FLAGS, ...WORKTREE_FLAGS, ...LOOP_FLAGS, ...TASK_OWN_FLAGS } as const satisfies Record<string, FlagSpec>;

export type TaskFlags = LoopFlags;
