import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BusWriter } from '@app/messagebus';
import { AppConfig, DONE_FILE, parseGoDuration, parseYaml, RunCriteria, type RunsLayout, updateRunInfo } from '@app/storage';
import { errorText, RunnerError } from '../runner.errors';
import { readTaskSettings, TASK_SETTINGS_FILE, taskSettingsProblem, writeTaskSettings } from '../usage/task-settings';
import { DEFAULT_DONE_CRITERION_TIMEOUT_MS, DoneCriterion } from './criteria-settings';
import { runCriteria } from './run-criteria';

/** The completion-criteria settings of a Ralph loop (TaskOptions carries them); given ones are stored in TASK-SETTINGS.yaml. */
export interface CriteriaLoopOptions {
  /** Validated by validateDoneCriteria; given ⇒ replaces the task's stored criteria. */
  doneCriteria?: DoneCriterion[];
  doneCriteriaTimeoutMs?: number;
}

export interface CriteriaHookContext {
  /** The runs layout of the loop (handed down, not rebuilt from a root string). */
  layout: RunsLayout;
  projectId: string;
  taskId: string;
  /** The task's working tree (its worktree when it has one); the criteria run there. */
  cwd: string;
  env: Record<string, string | undefined>;
  config?: AppConfig;
  bus: BusWriter;
  signal?: AbortSignal;
  post(type: string, body: string): Promise<void>;
}

/** The calls task.ts makes into completion criteria (issue #33). */
export interface CriteriaHooks {
  /** Why the task's criteria cannot be resolved (requested but empty or unreadable): the task fails closed before any attempt. */
  problem: string | undefined;
  /** DONE is present: runs the criteria; false ⇒ DONE was set aside (kept as evidence) and the next attempt hears why. */
  accept(runId: string | undefined): Promise<boolean>;
  /** The prompt of the next attempt: the last criteria failure first, then the task. */
  promptFor(prompt: string): string;
  /** The last failure's one-line reason (for the loop's final error). */
  lastFailure(): string | undefined;
}

/** DONE while its completion criteria run. */
export const CHECKING_FILE = 'DONE.checking';

/** The prompt section of a rejected DONE. */
export function criteriaFailurePrompt(result: RunCriteria): string {
  const failed = result.results.find((r) => !r.passed);
  let text = '## Completion criteria failed\n' + 'The previous attempt wrote DONE, but the completion criteria did not pass, so the task is NOT done.\n';
  text += `Reason: ${result.reason ?? 'not passed'}\n`;
  if (failed) {
    text += `Command: ${failed.command}\nExit code: ${failed.exit_code}${failed.timed_out ? ' (timed out)' : ''}\n`;
    if (failed.output_tail) text += `Output (last lines):\n\`\`\`\n${failed.output_tail}\n\`\`\`\n`;
  }
  return text + 'Fix the cause, make the criteria pass, then write DONE again.\n\n';
}

/** Criteria stored for the task, or why they cannot be used (requested but empty or unreadable). */
function resolveCriteria(taskDir: string, config?: AppConfig): { criteria?: DoneCriterion[]; timeoutMs: number; problem?: string } {
  // config validation bounds defaults.done_criteria_timeout (1s..24h)
  const fromConfig = config?.defaults?.done_criteria_timeout;
  const timeoutMs = fromConfig ? parseGoDuration(fromConfig) : DEFAULT_DONE_CRITERION_TIMEOUT_MS;
  const path = join(taskDir, TASK_SETTINGS_FILE);
  if (!existsSync(path)) return { timeoutMs };
  let requested = false;
  try {
    const doc = parseYaml(readFileSync(path, 'utf8')) as unknown;
    requested = typeof doc === 'object' && doc !== null && 'done_criteria' in doc;
  } catch {
    requested = /^done_criteria\s*:/m.test(readFileSync(path, 'utf8'));
  }
  if (!requested) return { timeoutMs };
  const problem = taskSettingsProblem(taskDir);
  if (problem) return { timeoutMs, problem: `completion criteria cannot be resolved (fail closed): ${problem}` };
  const settings = readTaskSettings(taskDir);
  if (!settings.done_criteria?.length) return { timeoutMs, problem: `completion criteria resolve to nothing (fail closed): ${path} lists no done_criteria` };
  return { criteria: settings.done_criteria, timeoutMs: settings.done_criteria_timeout_ms ?? timeoutMs };
}

export function criteriaHooks(opts: CriteriaLoopOptions, ctx: CriteriaHookContext): CriteriaHooks {
  const { layout } = ctx;
  const taskDir = layout.taskDir(ctx.projectId, ctx.taskId);
  if (opts.doneCriteria !== undefined || opts.doneCriteriaTimeoutMs !== undefined) {
    writeTaskSettings(taskDir, { done_criteria: opts.doneCriteria, done_criteria_timeout_ms: opts.doneCriteriaTimeoutMs });
  }
  const resolved = resolveCriteria(taskDir, ctx.config);
  let pending: RunCriteria | undefined;
  let last: string | undefined;

  const record = async (runId: string | undefined, result: RunCriteria): Promise<void> => {
    if (!runId) return;
    const path = layout.runInfoPath(ctx.projectId, ctx.taskId, runId);
    if (!existsSync(path)) return;
    try {
      await updateRunInfo(path, (info) => ({ ...info, criteria: result }));
    } catch (err) {
      await ctx.post('WARNING', `could not record the completion criteria in ${path}: ${errorText(err)}`);
    }
  };

  const move = (from: string, to: string, what: string): void => {
    try {
      renameSync(from, to);
    } catch (err) {
      throw new RunnerError('IO', `${what} (${from} → ${to}): ${errorText(err)}`);
    }
  };
  const done = join(taskDir, DONE_FILE);
  const checking = join(taskDir, CHECKING_FILE);
  // a check cut short (the runner died) is checked again: the DONE comes back
  if (resolved.criteria && existsSync(checking) && !existsSync(done)) move(checking, done, 'restore the DONE of an interrupted criteria check');

  return {
    problem: resolved.problem,
    async accept(runId) {
      const criteria = resolved.criteria;
      if (!criteria) return true;
      await ctx.post('INFO', `DONE written: checking ${criteria.length} completion criteri${criteria.length === 1 ? 'on' : 'a'} in ${ctx.cwd}`);
      // while the commands run the task is not done for anyone (dependents, listings): DONE is held aside
      move(done, checking, 'hold the DONE aside while the criteria run');
      let result: RunCriteria;
      try {
        result = await runCriteria(criteria, { cwd: resolve(ctx.cwd), env: ctx.env, defaultTimeoutMs: resolved.timeoutMs, signal: ctx.signal });
      } catch (err) {
        result = { passed: false, reason: `the criteria could not run: ${errorText(err)}`, checked_at: new Date(), results: [] };
      }
      await record(runId, result);
      if (result.passed) {
        // rename keeps the marker's inode and mtime: its completion key is the agent's DONE
        move(checking, done, 'restore the DONE after the criteria passed');
        await ctx.post('INFO', `completion criteria passed (${result.results.length} command${result.results.length === 1 ? '' : 's'})`);
        return true;
      }
      const aside = join(taskDir, `${DONE_FILE}.rejected-${runId || Date.now()}`);
      move(checking, aside, 'set the rejected DONE aside');
      last = result.reason;
      pending = result;
      const failed = result.results.find((r) => !r.passed);
      let body = `${result.reason ?? 'completion criteria not passed'}; DONE set aside as ${aside}; the task is not done`;
      if (failed?.output_tail) body += `\n\n${failed.output_tail}`;
      await ctx.bus.append({ type: 'CRITERIA_FAILED', project_id: ctx.projectId, task_id: ctx.taskId, run_id: runId ?? '', body });
      return false;
    },
    promptFor(prompt) {
      if (!pending) return prompt;
      const text = criteriaFailurePrompt(pending) + prompt;
      pending = undefined;
      return text;
    },
    lastFailure: () => last,
  };
}
