import { Option } from 'nest-commander';
import { validateTaskSettings, type DoneCriterion, type IsolationRequest, type TaskSettings } from '@app/runner';
import { ScopeOptionParsers } from './support/scope-options';
import { collect, countFlag } from './support/options';
import { RunFlags, optionalDuration } from './job-common';

export interface LoopFlags extends RunFlags {
  dependsOn?: string[];
  dependencyPollInterval?: string;
  maxRestarts?: string;
  childWaitTimeout?: string;
  childPollInterval?: string;
  restartDelay?: string;
  inputWait?: string;
  stallAfter?: string;
  killOnStall?: boolean;
  worktree?: boolean;
  repo?: string;
  base?: string;
  paths?: string[];
  adopt?: boolean;
  maxTokens?: string;
  maxCostUsd?: string;
  maxWallTime?: string;
  resumeMode?: string;
  doneWhen?: string[];
  doneTimeout?: string;
  maxDelegationDepth?: string;
  maxChildrenPerRun?: string;
  maxRunsPerTree?: string;
}

/** `--worktree` (implied by `--repo`, `--base`, `--paths`); undefined leaves it to config and an existing worktree. */
export function isolationFromFlags(flags: Pick<LoopFlags, 'worktree' | 'repo' | 'base' | 'paths'>): IsolationRequest | undefined {
  const asked = flags.worktree || flags.repo !== undefined || flags.base !== undefined || flags.paths !== undefined;
  if (!asked) return undefined;
  return { worktree: true, repo: flags.repo, base: flags.base, paths: flags.paths };
}

/** `--worktree`, `--repo`, `--base` of task, task resume, resume and job (docs/worktrees.md). */
export abstract class WorktreeFlagParsers extends ScopeOptionParsers {
  @Option({ flags: '--worktree', description: 'run in its own git worktree on branch conductor/<task-id> (<repo>/.conductor/worktrees/<task-id>; default: config defaults.isolation)' })
  parseWorktree(): boolean {
    return true;
  }

  @Option({ flags: '--repo <dir>', description: 'git repository of the worktree (default: the repository of the working directory; implies --worktree)' })
  parseRepo(v: string): string {
    return v;
  }

  @Option({ flags: '--base <ref>', description: 'branch or commit the worktree starts from and merges into (default: the repository HEAD; implies --worktree)' })
  parseBase(v: string): string {
    return v;
  }

  @Option({ flags: '--paths <paths>', description: 'repository paths the task expects to change (repeatable or comma-separated; overlap warnings; implies --worktree)' })
  parsePaths(v: string, prev?: string[]): string[] {
    return collect(v, prev);
  }
  adopt?: boolean;
}

export interface LoopSettings {
  maxRestarts?: number;
  restartDelayMs?: number;
  childWaitTimeoutMs?: number;
  childPollIntervalMs?: number;
  dependencyPollIntervalMs?: number;
  idleTimeoutMs?: number;
  inputWaitMs?: number;
  stallAfterMs?: number;
  killOnStall?: boolean;
  adopt?: boolean;
  budget?: TaskSettings;
  doneCriteria?: DoneCriterion[];
  doneCriteriaTimeoutMs?: number;
}

/** --max-tokens, --max-cost-usd, --max-wall-time, --resume-mode: validated by the runner's one validator. */
export function budgetFlags(flags: { maxTokens?: string; maxCostUsd?: string; maxWallTime?: string; resumeMode?: string; maxDelegationDepth?: string; maxChildrenPerRun?: string; maxRunsPerTree?: string }): TaskSettings {
  return validateTaskSettings({
    max_tokens: flags.maxTokens,
    max_cost_usd: flags.maxCostUsd,
    max_wall_time: flags.maxWallTime,
    resume_mode: flags.resumeMode,
    max_delegation_depth: flags.maxDelegationDepth,
    max_children_per_run: flags.maxChildrenPerRun,
    max_runs_per_tree: flags.maxRunsPerTree,
  });
}

/** --done-when (repeatable) and --done-timeout: the task's completion criteria, validated by the runner's one validator. */
export function criteriaFlags(flags: { doneWhen?: string[]; doneTimeout?: string }): Pick<LoopSettings, 'doneCriteria' | 'doneCriteriaTimeoutMs'> {
  const s = validateTaskSettings({ done_criteria: flags.doneWhen, done_criteria_timeout: flags.doneTimeout });
  return { doneCriteria: s.done_criteria, doneCriteriaTimeoutMs: s.done_criteria_timeout_ms };
}

/** Parses the Ralph-loop flags; bad values are usage errors. */
export function loopSettings(flags: LoopFlags, defaultMaxRestarts?: number): LoopSettings {
  return {
    maxRestarts: flags.maxRestarts !== undefined ? countFlag(flags.maxRestarts, '--max-restarts') : defaultMaxRestarts,
    restartDelayMs: optionalDuration(flags.restartDelay, '--restart-delay'),
    childWaitTimeoutMs: optionalDuration(flags.childWaitTimeout, '--child-wait-timeout'),
    childPollIntervalMs: optionalDuration(flags.childPollInterval, '--child-poll-interval'),
    dependencyPollIntervalMs: optionalDuration(flags.dependencyPollInterval, '--dependency-poll-interval'),
    idleTimeoutMs: optionalDuration(flags.timeout, '--timeout'),
    inputWaitMs: optionalDuration(flags.inputWait, '--input-wait'),
    stallAfterMs: optionalDuration(flags.stallAfter, '--stall-after'),
    killOnStall: flags.killOnStall,
    adopt: flags.adopt === true ? true : undefined,
    budget: budgetFlags(flags),
    ...criteriaFlags(flags),
  };
}

/** Flags common to `task`, `task resume` and `resume` (nest-commander reads the decorators of a base class). */
export abstract class LoopFlagParsers extends WorktreeFlagParsers {
  @Option({ flags: '--agent <name>', description: 'config agent name or agent type: claude, codex, gemini, perplexity, xai (default: diversification policy, defaults.agent, first configured agent)' })
  parseAgent(v: string): string {
    return v;
  }

  @Option({ flags: '--cwd <dir>', description: 'working directory of the agent (default: the task folder)' })
  parseCwd(v: string): string {
    return v;
  }

  @Option({ flags: '--max-restarts <n>', description: 'restarts allowed after the first attempt: N restarts = N+1 attempts, 0 = run once (default: 100; resume: 3)' })
  parseMaxRestarts(v: string): string {
    return v;
  }

  @Option({ flags: '--restart-delay <duration>', description: 'pause between attempts (Go duration; default 1s)' })
  parseRestartDelay(v: string): string {
    return v;
  }

  @Option({ flags: '--child-wait-timeout <duration>', description: 'after DONE, how long to wait for live child runs before completing with a warning (default 5m0s)' })
  parseChildWaitTimeout(v: string): string {
    return v;
  }

  @Option({ flags: '--input-wait <duration>', description: 'how long the loop waits for an answer to an open QUESTION/BLOCKED before the task fails (default 24h0m0s)' })
  parseInputWait(v: string): string {
    return v;
  }

  @Option({ flags: '--stall-after <duration>', description: 'flag a run stalled (bus WARNING, UI) after this long without output or bus activity (default: off)' })
  parseStallAfter(v: string): string {
    return v;
  }

  @Option({ flags: '--kill-on-stall', description: 'with --stall-after: also terminate a stalled run (the loop restarts it like a failed attempt)' })
  parseKillOnStall(): boolean {
    return true;
  }

  @Option({ flags: '--max-tokens <n>', description: 'budget of the task tree (its runs and all descendant runs): input + output tokens; crossing it stops the tree, posts BUDGET_EXCEEDED and never restarts (stored in TASK-SETTINGS.yaml; default: defaults.max_tokens)' })
  parseMaxTokens(v: string): string {
    return v;
  }

  @Option({ flags: '--max-cost-usd <usd>', description: 'budget of the task tree in US dollars, as reported by the agents (default: defaults.max_cost_usd)' })
  parseMaxCostUsd(v: string): string {
    return v;
  }

  @Option({ flags: '--max-wall-time <duration>', description: 'budget of the task tree in wall time since its first run started (default: defaults.max_wall_time)' })
  parseMaxWallTime(v: string): string {
    return v;
  }

  @Option({ flags: '--resume-mode <mode>', description: 'continue: each attempt resumes the previous attempt\'s agent session (claude/gemini --resume, codex exec resume); fresh (default) starts cold' })
  parseResumeMode(v: string): string {
    return v;
  }

  @Option({ flags: '--max-delegation-depth <n>', description: 'fan-out governor: child runs of this task\'s tree may nest at most this deep (1-1000; stored in TASK-SETTINGS.yaml; default: defaults.max_delegation_depth, 16); a deeper child job is refused, naming the limit and where it was set' })
  parseMaxDelegationDepth(v: string): string {
    return v;
  }

  @Option({ flags: '--max-children-per-run <n>', description: 'fan-out governor: a run in this task\'s tree may have at most n unfinished child runs (1-100000; stored in TASK-SETTINGS.yaml; default: defaults.max_children_per_run, unset = no limit); one more child job waits as queued (FIFO) until a place frees, or with --no-wait is refused, naming the limit and where it was set' })
  parseMaxChildrenPerRun(v: string): string {
    return v;
  }

  @Option({ flags: '--max-runs-per-tree <n>', description: 'fan-out governor: this task\'s tree (root run and all descendants) may hold at most n runs (1-100000; stored in TASK-SETTINGS.yaml; default: defaults.max_runs_per_tree, unset = no limit); one more child job is refused, naming the limit and where it was set' })
  parseMaxRunsPerTree(v: string): string {
    return v;
  }

  @Option({ flags: '--done-when <command>', description: 'completion criterion (repeatable): a shell command run in the task\'s working tree (its worktree when it has one) when the agent writes DONE; any failure sets DONE aside and restarts the agent with the failure (stored in TASK-SETTINGS.yaml)' })
  parseDoneWhen(v: string, prev?: string[]): string[] {
    return collect(v, prev);
  }

  @Option({ flags: '--done-timeout <duration>', description: 'timeout of each --done-when command; its process group is killed and it fails (default: defaults.done_criteria_timeout, 10m)' })
  parseDoneTimeout(v: string): string {
    return v;
  }

  @Option({ flags: '--adopt', description: 'when an agent of a runner that died is still running, or the runner renewed nothing for a lease ($CONDUCTOR_TASK_LEASE_MS, default 30s; e.g. stopped), take the task over: wait for that agent and continue the loop (default: refuse, naming its pid)' })
  parseAdopt(): boolean {
    return true;
  }

  @Option({ flags: '--child-poll-interval <duration>', description: 'how often to check child runs after DONE (default 1s)' })
  parseChildPollInterval(v: string): string {
    return v;
  }
}

/** The commands that act on one existing task (stop, task cancel, task delete) take the shared scope flags. */
export abstract class TaskScopeParsers extends ScopeOptionParsers {}
