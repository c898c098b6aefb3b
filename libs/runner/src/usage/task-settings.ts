import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { AppConfig, parseYaml, writeFileAtomic } from '@app/storage';
import { formatGoDuration, parseDurationFlag } from '../go-duration';
import { RunnerError } from '../runner.errors';
import { DoneCriterion, serializeDoneCriteria, validateCriterionTimeout, validateDoneCriteria } from '../criteria/criteria-settings';

export const TASK_SETTINGS_FILE = 'TASK-SETTINGS.yaml';

export type ResumeMode = 'continue' | 'fresh';

/** A task's budget over its whole sub-tree and its resume mode (issue #18). */
export interface TaskBudget {
  max_tokens?: number;
  max_cost_usd?: number;
  max_wall_time_ms?: number;
}

export interface TaskSettings extends TaskBudget {
  resume_mode?: ResumeMode;
  /** Completion criteria (issue #33): commands that must pass before DONE counts. */
  done_criteria?: DoneCriterion[];
  /** Timeout of a criterion without its own. */
  done_criteria_timeout_ms?: number;
  /** Fan-out governor (issue #33): the delegation depth limit of the task's sub-tree. */
  max_delegation_depth?: number;
  /** Fan-out governor: unfinished child runs per run in the task's sub-tree. */
  max_children_per_run?: number;
  /** Fan-out governor: runs per task tree (root run and descendants). */
  max_runs_per_tree?: number;
}

/** The one validator of budget input (CLI flags, API fields, the settings file). */
export function validateTaskSettings(raw: {
  max_tokens?: unknown;
  max_cost_usd?: unknown;
  max_wall_time?: unknown;
  resume_mode?: unknown;
  done_criteria?: unknown;
  done_criteria_timeout?: unknown;
  /** The parsed form (TaskSettings sent as JSON, e.g. to a scale-out worker). */
  done_criteria_timeout_ms?: unknown;
  max_delegation_depth?: unknown;
  max_children_per_run?: unknown;
  max_runs_per_tree?: unknown;
}): TaskSettings {
  const out: TaskSettings = {};
  if (raw.max_tokens !== undefined && raw.max_tokens !== null && raw.max_tokens !== '') {
    const n = typeof raw.max_tokens === 'string' && /^\d+$/.test(raw.max_tokens.trim()) ? Number(raw.max_tokens) : raw.max_tokens;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) throw new RunnerError('INVALID_INPUT', `max tokens must be a positive integer, got ${JSON.stringify(raw.max_tokens)}`);
    out.max_tokens = n;
  }
  if (raw.max_cost_usd !== undefined && raw.max_cost_usd !== null && raw.max_cost_usd !== '') {
    const n = typeof raw.max_cost_usd === 'string' && /^\d+(\.\d+)?$/.test(raw.max_cost_usd.trim()) ? Number(raw.max_cost_usd) : raw.max_cost_usd;
    if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0) throw new RunnerError('INVALID_INPUT', `max cost usd must be a positive number, got ${JSON.stringify(raw.max_cost_usd)}`);
    out.max_cost_usd = n;
  }
  if (raw.max_wall_time !== undefined && raw.max_wall_time !== null && raw.max_wall_time !== '') {
    let ms: number | undefined;
    if (typeof raw.max_wall_time === 'number') ms = raw.max_wall_time;
    else if (typeof raw.max_wall_time === 'string') {
      try {
        ms = parseDurationFlag(raw.max_wall_time);
      } catch {
        ms = undefined;
      }
    }
    if (ms === undefined || !Number.isFinite(ms) || ms <= 0) throw new RunnerError('INVALID_INPUT', `max wall time must be a positive duration like 30m, got ${JSON.stringify(raw.max_wall_time)}`);
    out.max_wall_time_ms = ms;
  }
  if (raw.resume_mode !== undefined && raw.resume_mode !== null && raw.resume_mode !== '') {
    if (raw.resume_mode !== 'continue' && raw.resume_mode !== 'fresh') throw new RunnerError('INVALID_INPUT', `resume mode must be continue or fresh, got ${JSON.stringify(raw.resume_mode)}`);
    out.resume_mode = raw.resume_mode;
  }
  if (raw.done_criteria !== undefined && raw.done_criteria !== null) out.done_criteria = validateDoneCriteria(raw.done_criteria);
  if (raw.max_delegation_depth !== undefined && raw.max_delegation_depth !== null && raw.max_delegation_depth !== '') {
    const v = raw.max_delegation_depth;
    const n = typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > 1000) {
      throw new RunnerError('INVALID_INPUT', `max delegation depth must be a whole number from 1 to 1000, got ${JSON.stringify(v)}`);
    }
    out.max_delegation_depth = n;
  }
  for (const key of ['max_children_per_run', 'max_runs_per_tree'] as const) {
    const v = raw[key];
    if (v === undefined || v === null || v === '') continue;
    const n = typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > 100000) {
      throw new RunnerError('INVALID_INPUT', `${key.replace(/_/g, ' ')} must be a whole number from 1 to 100000, got ${JSON.stringify(v)}`);
    }
    out[key] = n;
  }
  const criteriaTimeout = raw.done_criteria_timeout ?? (typeof raw.done_criteria_timeout_ms === 'number' ? `${raw.done_criteria_timeout_ms}ms` : undefined);
  if (criteriaTimeout !== undefined && criteriaTimeout !== null && criteriaTimeout !== '') {
    out.done_criteria_timeout_ms = validateCriterionTimeout(criteriaTimeout, 'done criteria timeout');
  }
  return out;
}

export function readTaskSettings(taskDir: string): TaskSettings {
  const path = join(taskDir, TASK_SETTINGS_FILE);
  if (!existsSync(path)) return {};
  try {
    const doc = parseYaml(readFileSync(path, 'utf8')) as Record<string, unknown> | null;
    return doc && typeof doc === 'object' ? validateTaskSettings(doc) : {};
  } catch {
    return {};
  }
}

/** Why the task's settings file cannot be used (unparseable, not a mapping, invalid values); undefined when fine or absent. */
export function taskSettingsProblem(taskDir: string): string | undefined {
  const path = join(taskDir, TASK_SETTINGS_FILE);
  if (!existsSync(path)) return undefined;
  try {
    const doc = parseYaml(readFileSync(path, 'utf8')) as unknown;
    if (doc === null || doc === undefined) return undefined;
    if (typeof doc !== 'object' || Array.isArray(doc)) return `read ${path}: not a mapping`;
    validateTaskSettings(doc as Record<string, unknown>);
    return undefined;
  } catch (err) {
    return `read ${path}: ${(err as Error).message.split('\n')[0]}`;
  }
}

/**
 * Merges `given` into the task's settings file (atomic); absent fields keep their stored values.
 * A settings file that cannot be read is not overwritten as if it were empty: it is renamed aside
 * (`TASK-SETTINGS.yaml.corrupt-<ms>`) with a warning line, so the evidence stays.
 */
export function writeTaskSettings(taskDir: string, given: TaskSettings): TaskSettings {
  const problem = taskSettingsProblem(taskDir);
  if (problem) {
    const aside = join(taskDir, `${TASK_SETTINGS_FILE}.corrupt-${Date.now()}`);
    renameSync(join(taskDir, TASK_SETTINGS_FILE), aside);
    process.stderr.write(`warning: ${problem}: kept as ${aside}, writing new settings\n`);
  }
  const merged = { ...readTaskSettings(taskDir), ...stripUndefined(given) };
  let text = '';
  if (merged.max_tokens) text += `max_tokens: ${merged.max_tokens}\n`;
  if (merged.max_cost_usd) text += `max_cost_usd: ${merged.max_cost_usd}\n`;
  if (merged.max_wall_time_ms) text += `max_wall_time: ${formatGoDuration(merged.max_wall_time_ms)}\n`;
  if (merged.resume_mode) text += `resume_mode: ${merged.resume_mode}\n`;
  if (merged.max_delegation_depth) text += `max_delegation_depth: ${merged.max_delegation_depth}\n`;
  if (merged.max_children_per_run) text += `max_children_per_run: ${merged.max_children_per_run}\n`;
  if (merged.max_runs_per_tree) text += `max_runs_per_tree: ${merged.max_runs_per_tree}\n`;
  text += serializeDoneCriteria(merged.done_criteria, merged.done_criteria_timeout_ms);
  writeFileAtomic(join(taskDir, TASK_SETTINGS_FILE), text);
  return merged;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export function hasSettings(s: TaskSettings): boolean {
  return Object.values(s).some((v) => v !== undefined);
}

/** Effective settings: the task's file, then config defaults. */
export function effectiveSettings(taskDir: string, config?: AppConfig): TaskSettings {
  const d = config?.defaults;
  const fromConfig = d ? validateTaskSettings({ max_tokens: d.max_tokens, max_cost_usd: d.max_cost_usd, max_wall_time: d.max_wall_time, resume_mode: d.resume_mode }) : {};
  return { ...fromConfig, ...stripUndefined(readTaskSettings(taskDir)) };
}
