import type { TaskCriteriaInfo } from '@app/contracts';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRunInfo, RunInfo, runInfoIn, taskRunsDir } from '@app/storage';
import { formatGoDuration } from '../go-duration';
import { readTaskSettings, TASK_SETTINGS_FILE, taskSettingsProblem } from '../usage/task-settings';

/** A task's completion criteria and its latest check, for status, the API and the dashboard (issue #33): the wire type. */
export type TaskCriteriaView = TaskCriteriaInfo;

/** Undefined when the task has no criteria (its TASK-SETTINGS.yaml does not mention done_criteria). */
export function taskCriteriaView(taskDir: string, runs?: { runId: string; info: RunInfo }[]): TaskCriteriaView | undefined {
  const path = join(taskDir, TASK_SETTINGS_FILE);
  if (!existsSync(path)) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  if (!/^done_criteria\s*:/m.test(text)) return undefined;
  const problem = taskSettingsProblem(taskDir);
  const criteria = problem ? undefined : readTaskSettings(taskDir).done_criteria;
  if (!criteria?.length) return { commands: [], state: 'unresolvable', reason: problem ?? 'done_criteria lists no command', rejected: 0 };
  const view: TaskCriteriaView = {
    commands: criteria.map((c) => (c.timeout_ms ? { command: c.command, timeout: formatGoDuration(c.timeout_ms) } : { command: c.command })),
    state: 'pending',
    rejected: 0,
  };
  let latest: { runId: string; at: number; passed: boolean; reason?: string; checked: Date } | undefined;
  for (const r of runs ?? readRuns(taskDir)) {
    const c = r.info.criteria;
    if (!c) continue;
    if (!c.passed) view.rejected++;
    if (!latest || c.checked_at.getTime() >= latest.at) latest = { runId: r.runId, at: c.checked_at.getTime(), passed: c.passed, reason: c.reason, checked: c.checked_at };
  }
  if (latest) {
    view.state = latest.passed ? 'passed' : 'failed';
    view.run_id = latest.runId;
    view.checked_at = latest.checked.toISOString();
    if (latest.reason) view.reason = latest.reason;
  }
  return view;
}

function readRuns(taskDir: string): { runId: string; info: RunInfo }[] {
  const dir = taskRunsDir(taskDir);
  const out: { runId: string; info: RunInfo }[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const runId of names) {
    try {
      out.push({ runId, info: readRunInfo(runInfoIn(dir, runId)) });
    } catch {
      // a run without a readable record has no criteria result
    }
  }
  return out;
}

/** One short cell for tables: passed / failed: <reason> / pending / unresolvable: <reason>. */
export function criteriaCell(v: TaskCriteriaView | undefined): string {
  if (!v) return '-';
  if (v.state === 'passed' || v.state === 'pending') return v.state;
  const reason = (v.reason ?? '').replace(/\s+/g, ' ');
  return `${v.state}${reason ? `: ${reason.length > 80 ? reason.slice(0, 77) + '...' : reason}` : ''}`;
}
