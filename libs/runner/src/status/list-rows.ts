import { statSync } from 'node:fs';
import {
  blockedBy,
  formatGoDuration,
  hasDoneFile,
  isZeroTime,
  RunInfo,
  runState,
  shownExitCode,
  StorageIndex,
  synthesizeRunInfo,
  taskRunsDir,
} from '@app/storage';
import { needsInputOf } from '../needs-input';
import { taskUsageView, type TaskUsageView } from '../usage/task-view';
import { collectActivity, rfc3339Seconds as rfc3339, utcSecond, type ActivitySignals } from './activity';
import { dependsOnOrNone, taskCorruptReason } from '../records/records';
import { summarizeTask, taskStatusFilter } from './task-summary';

function mtimeOf(path: string): Date | undefined {
  try {
    return statSync(path).mtime;
  } catch {
    return undefined;
  }
}

/** One task row of `list --project` (JSON field order as upstream; empty optional fields omitted). */
export interface TaskRow {
  task_id: string;
  /** Status `corrupt` (issue #29): why the latest run-info or a task record file cannot be parsed. */
  corrupt_reason?: string;
  runs: number;
  latest_status: string;
  done: boolean;
  last_activity: string;
  depends_on?: string[];
  blocked_by?: string[];
  /** needs_input: open QUESTION/BLOCKED messages without an ANSWER. */
  open_questions?: number;
  /** Usage of the task's runs and a hold (rate_limited, paused, budget_exceeded; issue #18). */
  resume_at?: string;
  budget_exceeded?: string;
  paused?: TaskUsageView['paused'];
  usage?: TaskUsageView['usage'];
  activity?: ActivitySignals;
}

/** One run row of `list --project --task`. */
export interface RunRow {
  run_id: string;
  status: string;
  /** Status `corrupt`: why the run-info.yaml cannot be parsed. */
  corrupt_reason?: string;
  /** null while the run has not ended (shown blank). */
  exit_code: number | null;
  /** The configured agent name (run-info agent_name, added field), else the agent type. */
  agent?: string;
  /** The run that started this one as a sub-agent (run-info parent_run_id); absent for a root run. */
  parent_run_id?: string;
  started: string;
  duration: string;
}

function latestReadableRun(index: StorageIndex, project: string, task: string, runs: string[]): { runId: string; info: RunInfo } | undefined {
  for (let i = runs.length - 1; i >= 0; i--) {
    try {
      const info = index.runInfo(project, task, runs[i]);
      if (info) return { runId: runs[i], info };
    } catch {
      // unreadable run-info: try the previous run
    }
  }
  return undefined;
}

export function buildTaskRow(index: StorageIndex, project: string, task: string, activity?: { driftAfterMs: number }): TaskRow {
  const layout = index.layout;
  const taskDir = layout.taskDir(project, task);
  const row: TaskRow = { task_id: task, runs: 0, latest_status: '-', done: hasDoneFile(taskDir), last_activity: '' };
  const dependsOn = dependsOnOrNone(taskDir);
  if (dependsOn.length > 0) row.depends_on = dependsOn;
  const mtime = mtimeOf(taskDir);
  if (mtime) row.last_activity = rfc3339(mtime); // else vanished while listing: leave empty
  const runs = index.listRuns(project, task);
  row.runs = runs.length;
  let latest: { runId: string; info: RunInfo } | undefined;
  if (runs.length === 0) {
    if (row.done) row.latest_status = 'done';
    else if (dependsOn.length > 0) {
      const blocked = blockedBy(layout.root, project, dependsOn);
      if (blocked.length > 0) {
        row.latest_status = 'blocked';
        row.blocked_by = blocked;
      }
    }
  } else {
    latest = latestReadableRun(index, project, task, runs);
    if (latest) row.latest_status = runState(latest.info, taskDir);
    else if (row.done) row.latest_status = 'done';
  }
  const open = row.done ? [] : needsInputOf(taskDir, layout.taskBus(project, task));
  if (open.length) row.open_questions = open.length;
  const { hold, ...usage } = taskUsageView(layout, project, task, row.done);
  Object.assign(row, usage);
  const corrupt = taskCorruptReason(taskDir) ?? latest?.info.corrupt_reason;
  if (corrupt) row.corrupt_reason = corrupt;
  row.latest_status = summarizeTask({ status: row.latest_status, running: row.latest_status === 'running', openQuestions: open.length, hold, corruptReason: corrupt }).status;
  if (activity) {
    const info = latest?.info;
    row.activity = collectActivity(
      taskDir,
      {
        runId: latest?.runId,
        status: row.latest_status,
        startTime: info && !isZeroTime(info.start_time) ? info.start_time : undefined,
        outputPath: info?.output_path,
        stdoutPath: info?.stdout_path,
        stderrPath: info?.stderr_path,
      },
      activity.driftAfterMs,
    );
  }
  return row;
}

/** Applies `--status` (the one filter table); returns undefined for an unknown filter (callers warn and show all). */
export function filterTaskRows(rows: TaskRow[], filter: string): TaskRow[] | undefined {
  if (filter.trim() === '') return rows;
  const keep = taskStatusFilter(filter);
  return keep && rows.filter((r) => keep({ status: r.latest_status, done: r.done }));
}

export function buildRunRow(index: StorageIndex, project: string, task: string, runId: string): RunRow {
  const row: RunRow = { run_id: runId, status: '', exit_code: 0, started: '', duration: '' };
  let info: RunInfo | undefined;
  try {
    // A folder without run-info.yaml reads as the synthesised `unknown` record (blank times).
    info = index.runInfo(project, task, runId) ?? synthesizeRunInfo(index.layout.runInfoPath(project, task, runId));
  } catch {
    row.status = 'unknown';
    row.duration = '-';
    return row;
  }
  row.status = runState(info, index.layout.taskDir(project, task));
  if (info.corrupt_reason) row.corrupt_reason = info.corrupt_reason;
  row.exit_code = shownExitCode(info);
  row.agent = info.agent_name || info.agent || undefined;
  if (info.parent_run_id) row.parent_run_id = info.parent_run_id;
  if (!isZeroTime(info.start_time)) {
    row.started = utcSecond(info.start_time);
    if (info.status === 'running' || isZeroTime(info.end_time)) row.duration = 'running';
    else row.duration = formatGoDuration(Math.round((info.end_time.getTime() - info.start_time.getTime()) / 1000) * 1000);
  }
  return row;
}

export function runsDirOf(index: StorageIndex, project: string, task: string): string {
  return taskRunsDir(index.layout.taskDir(project, task));
}
