import { formatGoDuration, parseDurationFlag } from '../go-duration';
import { RunnerError } from '../runner.errors';

/** One completion criterion: a shell command run in the task's working tree when the agent writes DONE. */
export interface DoneCriterion {
  command: string;
  /** This command's own timeout; the task's `done_criteria_timeout` (or the default) when absent. */
  timeout_ms?: number;
}

export const MAX_DONE_CRITERIA = 20;
export const MAX_DONE_CRITERION_LENGTH = 4096;
export const MIN_DONE_CRITERION_TIMEOUT_MS = 1000;
export const MAX_DONE_CRITERION_TIMEOUT_MS = 24 * 3600 * 1000;
export const DEFAULT_DONE_CRITERION_TIMEOUT_MS = 10 * 60 * 1000;

/** A criterion timeout (Go duration or seconds) within bounds, in ms. */
export function validateCriterionTimeout(raw: unknown, what: string): number {
  let ms: number | undefined;
  if (typeof raw === 'string') {
    try {
      ms = parseDurationFlag(raw, what);
    } catch {
      ms = undefined;
    }
  }
  if (ms === undefined || !Number.isFinite(ms) || ms < MIN_DONE_CRITERION_TIMEOUT_MS || ms > MAX_DONE_CRITERION_TIMEOUT_MS) {
    throw new RunnerError('INVALID_INPUT', `${what} must be a duration between 1s and 24h like 5m, got ${JSON.stringify(raw)}`);
  }
  return ms;
}

function validateCommand(raw: unknown, i: number): string {
  if (typeof raw !== 'string') throw new RunnerError('INVALID_INPUT', `done criterion ${i + 1} must be a command string, got ${JSON.stringify(raw)}`);
  const command = raw.trim();
  if (command === '') throw new RunnerError('INVALID_INPUT', `done criterion ${i + 1} is empty: give a command such as "npm test"`);
  if (command.length > MAX_DONE_CRITERION_LENGTH) throw new RunnerError('INVALID_INPUT', `done criterion ${i + 1} is longer than ${MAX_DONE_CRITERION_LENGTH} characters`);
  if (command.includes('\0')) throw new RunnerError('INVALID_INPUT', `done criterion ${i + 1} contains a NUL character`);
  return command;
}

/**
 * The one validator of `done_criteria` input (CLI flags, API and MCP fields, TASK-SETTINGS.yaml):
 * a non-empty list of commands, each a string or `{command, timeout}`. An empty list is refused:
 * a criteria list that checks nothing must never count as passed.
 */
export function validateDoneCriteria(raw: unknown): DoneCriterion[] {
  if (!Array.isArray(raw)) throw new RunnerError('INVALID_INPUT', `done_criteria must be a list of commands, got ${JSON.stringify(raw)}`);
  if (raw.length === 0) throw new RunnerError('INVALID_INPUT', 'done_criteria is empty: give at least one command (an empty list never counts as passed)');
  if (raw.length > MAX_DONE_CRITERIA) throw new RunnerError('INVALID_INPUT', `done_criteria has ${raw.length} commands; at most ${MAX_DONE_CRITERIA} are allowed`);
  return raw.map((item: unknown, i) => {
    if (typeof item === 'object' && item !== null && !Array.isArray(item)) {
      const o = item as Record<string, unknown>;
      // timeout_ms: the parsed form (TaskSettings sent as JSON, e.g. to a scale-out worker)
      const unknown = Object.keys(o).filter((k) => k !== 'command' && k !== 'timeout' && k !== 'timeout_ms');
      if (unknown.length) throw new RunnerError('INVALID_INPUT', `done criterion ${i + 1}: unknown field ${JSON.stringify(unknown[0])} (use command and timeout)`);
      const c: DoneCriterion = { command: validateCommand(o.command, i) };
      const timeout = o.timeout ?? (typeof o.timeout_ms === 'number' ? `${o.timeout_ms}ms` : o.timeout_ms);
      if (timeout !== undefined && timeout !== null && timeout !== '') c.timeout_ms = validateCriterionTimeout(timeout, `done criterion ${i + 1} timeout`);
      return c;
    }
    return { command: validateCommand(item, i) };
  });
}

/** The `done_criteria:` (and `done_criteria_timeout:`) lines of TASK-SETTINGS.yaml. */
export function serializeDoneCriteria(criteria: DoneCriterion[] | undefined, timeoutMs: number | undefined): string {
  let text = '';
  if (criteria && criteria.length) {
    text += 'done_criteria:\n';
    for (const c of criteria) {
      text += `    - command: ${JSON.stringify(c.command)}\n`;
      if (c.timeout_ms) text += `      timeout: ${formatGoDuration(c.timeout_ms)}\n`;
    }
  }
  if (timeoutMs) text += `done_criteria_timeout: ${formatGoDuration(timeoutMs)}\n`;
  return text;
}
