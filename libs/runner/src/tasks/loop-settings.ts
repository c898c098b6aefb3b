/**
 * What the Ralph-loop and worktree flags of `task`, `task resume`, `resume` and `job` mean
 * (declared in apps/cli/src/commands/engine/loop-flags.ts): flag values → loop settings. Bad values
 * are usage errors (@app/boot); budgets and criteria go through the runner's one validator.
 */
import { countFlag, optionalDuration } from '../flag-values';
import { validateTaskSettings, type TaskSettings } from '../usage/task-settings';
import type { DoneCriterion } from '../criteria/criteria-settings';
import type { IsolationRequest } from '@app/worktree';

/** The flag values the loop settings are read from (the CLI's LoopFlags). */
export interface LoopSettingsFlags {
  timeout?: string;
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
export function isolationFromFlags(flags: Pick<LoopSettingsFlags, 'worktree' | 'repo' | 'base' | 'paths'>): IsolationRequest | undefined {
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
export function loopSettings(flags: LoopSettingsFlags, defaultMaxRestarts?: number): LoopSettings {
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
