/**
 * The flags of the Ralph-loop commands (`task`, `task resume`, `resume`) and of `job`'s worktree,
 * declared once for their nest-commander classes (task-options.ts) and the Nest-free hot path
 * (apps/cli/src/fast); loop-settings.ts reads them. Only type imports: the fast path loads this
 * file for every hot command (the unbundled build would load a lib barrel, and NestJS with it).
 */
import type { FlagSpec } from '@app/boot';
import type { LoopSettingsFlags } from '@app/runner';
import type { RunFlags } from './job-common';

/** `--worktree`, `--repo`, `--base`, `--paths` of task, task resume, resume and job (docs/worktrees.md). */
export const WORKTREE_FLAGS = {
  worktree: { flags: '--worktree', type: 'boolean', description: 'run in its own git worktree on branch conductor/<task-id> (<repo>/.conductor/worktrees/<task-id>; default: config defaults.isolation)' },
  repo: { flags: '--repo <dir>', type: 'string', description: 'git repository of the worktree (default: the repository of the working directory; implies --worktree)' },
  base: { flags: '--base <ref>', type: 'string', description: 'branch or commit the worktree starts from and merges into (default: the repository HEAD; implies --worktree)' },
  paths: { flags: '--paths <paths>', type: 'string', multiple: true, description: 'repository paths the task expects to change (repeatable or comma-separated; overlap warnings; implies --worktree)' },
} as const satisfies Record<string, FlagSpec>;

/** Flags common to `task`, `task resume` and `resume`. */
export const LOOP_FLAGS = {
  agent: { flags: '--agent <name>', type: 'string', description: 'config agent name or agent type: claude, codex, gemini, perplexity, xai (default: diversification policy, defaults.agent, first configured agent)' },
  cwd: { flags: '--cwd <dir>', type: 'string', description: 'working directory of the agent (default: the task folder)' },
  maxRestarts: { flags: '--max-restarts <n>', type: 'string', description: 'restarts allowed after the first attempt: N restarts = N+1 attempts, 0 = run once (default: 100; resume: 3)' },
  restartDelay: { flags: '--restart-delay <duration>', type: 'string', description: 'pause between attempts (Go duration; default 1s)' },
  childWaitTimeout: { flags: '--child-wait-timeout <duration>', type: 'string', description: 'after DONE, how long to wait for live child runs before completing with a warning (default 5m0s)' },
  inputWait: { flags: '--input-wait <duration>', type: 'string', description: 'how long the loop waits for an answer to an open QUESTION/BLOCKED before the task fails (default 24h0m0s)' },
  stallAfter: { flags: '--stall-after <duration>', type: 'string', description: 'flag a run stalled (bus WARNING, UI) after this long without output or bus activity (default: off)' },
  killOnStall: { flags: '--kill-on-stall', type: 'boolean', description: 'with --stall-after: also terminate a stalled run (the loop restarts it like a failed attempt)' },
  maxTokens: { flags: '--max-tokens <n>', type: 'string', description: 'budget of the task tree (its runs and all descendant runs): input + output tokens; crossing it stops the tree, posts BUDGET_EXCEEDED and never restarts (stored in TASK-SETTINGS.yaml; default: defaults.max_tokens)' },
  maxCostUsd: { flags: '--max-cost-usd <usd>', type: 'string', description: 'budget of the task tree in US dollars, as reported by the agents (default: defaults.max_cost_usd)' },
  maxWallTime: { flags: '--max-wall-time <duration>', type: 'string', description: 'budget of the task tree in wall time since its first run started (default: defaults.max_wall_time)' },
  resumeMode: { flags: '--resume-mode <mode>', type: 'string', description: 'continue: each attempt resumes the previous attempt\'s agent session (claude/gemini --resume, codex exec resume); fresh (default) starts cold' },
  maxDelegationDepth: { flags: '--max-delegation-depth <n>', type: 'string', description: 'fan-out governor: child runs of this task\'s tree may nest at most this deep (1-1000; stored in TASK-SETTINGS.yaml; default: defaults.max_delegation_depth, 16); a deeper child job is refused, naming the limit and where it was set' },
  maxChildrenPerRun: { flags: '--max-children-per-run <n>', type: 'string', description: 'fan-out governor: a run in this task\'s tree may have at most n unfinished child runs (1-100000; stored in TASK-SETTINGS.yaml; default: defaults.max_children_per_run, unset = no limit); one more child job waits as queued (FIFO) until a place frees, or with --no-wait is refused, naming the limit and where it was set' },
  maxRunsPerTree: { flags: '--max-runs-per-tree <n>', type: 'string', description: 'fan-out governor: this task\'s tree (root run and all descendants) may hold at most n runs (1-100000; stored in TASK-SETTINGS.yaml; default: defaults.max_runs_per_tree, unset = no limit); one more child job is refused, naming the limit and where it was set' },
  doneWhen: { flags: '--done-when <command>', type: 'string', multiple: true, description: 'completion criterion (repeatable): a shell command run in the task\'s working tree (its worktree when it has one) when the agent writes DONE; any failure sets DONE aside and restarts the agent with the failure (stored in TASK-SETTINGS.yaml)' },
  doneTimeout: { flags: '--done-timeout <duration>', type: 'string', description: 'timeout of each --done-when command; its process group is killed and it fails (default: defaults.done_criteria_timeout, 10m)' },
  adopt: { flags: '--adopt', type: 'boolean', description: 'when an agent of a runner that died is still running, or the runner renewed nothing for a lease ($CONDUCTOR_TASK_LEASE_MS, default 30s; e.g. stopped), take the task over: wait for that agent and continue the loop (default: refuse, naming its pid)' },
  childPollInterval: { flags: '--child-poll-interval <duration>', type: 'string', description: 'how often to check child runs after DONE (default 1s)' },
} as const satisfies Record<string, FlagSpec>;

export interface LoopFlags extends RunFlags, LoopSettingsFlags {
  dependsOn?: string[];
}
