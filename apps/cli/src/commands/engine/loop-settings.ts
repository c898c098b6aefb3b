/** What the Ralph-loop and worktree flags (loop-flags.ts) mean, read by `task`, `task resume`, `resume` and `job`. */
import { validateTaskSettings, type DoneCriterion, type IsolationRequest, type TaskSettings } from '@app/runner';
import { countFlag } from './support/options';
import { optionalDuration } from './job-common';
import type { LoopFlags } from './loop-flags';

/** `--worktree` (implied by `--repo`, `--base`, `--paths`); undefined leaves it to config and an existing worktree. */
export function isolationFromFlags(flags: Pick<LoopFlags, 'worktree' | 'repo' | 'base' | 'paths'>): IsolationRequest | undefined {
  const asked = flags.worktree || flags.repo !== undefined || flags.base !== undefined || flags.paths !== undefined;
  if (!asked) return undefined;
  return { worktree: true, repo: flags.repo, base: flags.base, paths: flags.paths };
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
