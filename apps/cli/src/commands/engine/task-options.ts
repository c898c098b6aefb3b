import { Option } from 'nest-commander';
import { ScopeOptionParsers } from './support/scope-options';
import { collect } from './support/options';
import { LOOP_FLAGS, WORKTREE_FLAGS } from './loop-flags';

export { LOOP_FLAGS, WORKTREE_FLAGS, type LoopFlags } from './loop-flags';
export { budgetFlags, criteriaFlags, isolationFromFlags, loopSettings, type LoopSettings } from '@app/runner';

/** `--worktree`, `--repo`, `--base`, `--paths` (WORKTREE_FLAGS) of task, task resume, resume and job. */
export abstract class WorktreeFlagParsers extends ScopeOptionParsers {
  @Option(WORKTREE_FLAGS.worktree) parseWorktree(): boolean { return true; }
  @Option(WORKTREE_FLAGS.repo) parseRepo(v: string): string { return v; }
  @Option(WORKTREE_FLAGS.base) parseBase(v: string): string { return v; }
  @Option(WORKTREE_FLAGS.paths) parsePaths(v: string, prev?: string[]): string[] { return collect(v, prev); }
  adopt?: boolean;
}

/** Flags common to `task`, `task resume` and `resume` (nest-commander reads the decorators of a base class). */
export abstract class LoopFlagParsers extends WorktreeFlagParsers {
  @Option(LOOP_FLAGS.agent) parseAgent(v: string): string { return v; }
  @Option(LOOP_FLAGS.cwd) parseCwd(v: string): string { return v; }
  @Option(LOOP_FLAGS.maxRestarts) parseMaxRestarts(v: string): string { return v; }
  @Option(LOOP_FLAGS.restartDelay) parseRestartDelay(v: string): string { return v; }
  @Option(LOOP_FLAGS.childWaitTimeout) parseChildWaitTimeout(v: string): string { return v; }
  @Option(LOOP_FLAGS.inputWait) parseInputWait(v: string): string { return v; }
  @Option(LOOP_FLAGS.stallAfter) parseStallAfter(v: string): string { return v; }
  @Option(LOOP_FLAGS.killOnStall) parseKillOnStall(): boolean { return true; }
  @Option(LOOP_FLAGS.maxTokens) parseMaxTokens(v: string): string { return v; }
  @Option(LOOP_FLAGS.maxCostUsd) parseMaxCostUsd(v: string): string { return v; }
  @Option(LOOP_FLAGS.maxWallTime) parseMaxWallTime(v: string): string { return v; }
  @Option(LOOP_FLAGS.resumeMode) parseResumeMode(v: string): string { return v; }
  @Option(LOOP_FLAGS.maxDelegationDepth) parseMaxDelegationDepth(v: string): string { return v; }
  @Option(LOOP_FLAGS.maxChildrenPerRun) parseMaxChildrenPerRun(v: string): string { return v; }
  @Option(LOOP_FLAGS.maxRunsPerTree) parseMaxRunsPerTree(v: string): string { return v; }
  @Option(LOOP_FLAGS.doneWhen) parseDoneWhen(v: string, prev?: string[]): string[] { return collect(v, prev); }
  @Option(LOOP_FLAGS.doneTimeout) parseDoneTimeout(v: string): string { return v; }
  @Option(LOOP_FLAGS.adopt) parseAdopt(): boolean { return true; }
  @Option(LOOP_FLAGS.childPollInterval) parseChildPollInterval(v: string): string { return v; }
}

/** The commands that act on one existing task (stop, task cancel, task delete) take the shared scope flags. */
export abstract class TaskScopeParsers extends ScopeOptionParsers {}
