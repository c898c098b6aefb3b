import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { blockedBy, isTaskDone, listFolderNames, LivenessProbe, readDependsOn, readRunInfoReconciled, runInfoIn, RunsLayout, runState, shownExitCode, taskRunsDir, type RunInfo, RUNS_DIR_NAME } from '@app/storage';
import { isRunStalled, needsInputOf } from '../needs-input';
import { queueDir } from '../run-slots';
import { isTaskLoopAlive, TASK_LOCK_FILE } from '../task-lock';
import { taskUsageView, type TaskUsageView } from '../usage/task-view';
import { collectActivity, type ActivitySignals } from './activity';
import { worktreeStatus, type WorktreeStatus } from './worktree-status';
import { dependsOnOrNone, taskCorruptReason } from '../records/records';
import { taskCriteriaView, type TaskCriteriaView } from '../criteria/criteria-view';
import { summarizeTask } from './task-summary';

export { worktreeCells } from './worktree-cells';

/**
 * The rows of `run-agent status` and `run-agent watch` (cli-storage.md §7.3): what the task and
 * run folders say about each task. The commands render them.
 */

const listRunNames = listFolderNames;

/** One row of `status` (JSON field order as upstream). */
export interface StatusRow extends WorktreeStatus {
  task_id: string;
  status: string;
  exit_code: number | null;
  latest_run: string;
  done: boolean;
  pid_alive: boolean | null;
  /** Why the latest run waits before its agent starts (status `queued`; issue #33). */
  queued_reason?: string;
  /** The configured agent name of the latest run (added field; run-info agent_name). */
  agent_name?: string;
  depends_on?: string[];
  blocked_by?: string[];
  /** needs_input: open QUESTION/BLOCKED messages without an ANSWER. */
  open_questions?: number;
  /** The latest run is flagged stalled (no output and no bus activity; see docs/needs-input.md). */
  stalled?: boolean;
  /** Usage of the task's runs and a hold (rate_limited, paused, budget_exceeded; issue #18). */
  resume_at?: string;
  budget_exceeded?: string;
  paused?: TaskUsageView['paused'];
  usage?: TaskUsageView['usage'];
  activity?: ActivitySignals;
  /** Status `corrupt` (issue #29): why the latest run-info or a task record file cannot be parsed. */
  corrupt_reason?: string;
  /** Completion criteria (issue #33): the commands and the latest check; absent when the task has none. */
  criteria?: TaskCriteriaView;
}

const ZERO_TIME_MS = Date.UTC(1, 0, 1);

export function buildStatusRow(
  layout: RunsLayout,
  project: string,
  task: string,
  probe: LivenessProbe,
  activity: { enabled: boolean; driftAfterMs: number },
): StatusRow {
  const taskDir = layout.taskDir(project, task);
  const row: StatusRow = { task_id: task, status: '-', exit_code: null, latest_run: '', done: false, pid_alive: null };
  const dependsOn = dependsOnOrNone(taskDir);
  if (dependsOn.length) row.depends_on = dependsOn;
  row.done = isTaskDone(taskDir);
  Object.assign(row, worktreeStatus(taskDir));

  let info: RunInfo | undefined;
  const runs = listRunNames(taskRunsDir(taskDir)) ?? [];
  if (runs.length === 0) {
    if (row.done) {
      row.status = 'done';
    } else if (dependsOn.length) {
      const blocked = blockedBy(layout.root, project, dependsOn);
      if (blocked.length) {
        row.status = 'blocked';
        row.blocked_by = blocked;
      }
    }
  } else {
    row.latest_run = runs[runs.length - 1];
    const infoPath = runInfoIn(taskRunsDir(taskDir), row.latest_run);
    try {
      // A folder without run-info (being created, or queued) has no exit code or pid to show.
      info = existsSync(infoPath) ? readRunInfoReconciled(infoPath, probe) : undefined;
    } catch {
      info = undefined;
    }
    if (!info) {
      row.status = 'unknown';
    } else {
      // Issue #12: stopped/cancelled runs are named so (not failed 143); no exit code while running.
      row.status = runState(info, taskDir);
      if (info.queued_reason && row.status === 'queued') row.queued_reason = info.queued_reason;
      row.exit_code = shownExitCode(info);
      if (info.agent_name) row.agent_name = info.agent_name;
      row.pid_alive = row.status === 'running' && probe.isRunAlive(info);
    }
    // D13: a run waiting for a max_concurrent_runs slot leaves a queue marker.
    if ((row.status === 'unknown' || row.status === 'running') && existsSync(join(queueDir(layout.root), row.latest_run))) row.status = 'queued';
    if (row.status === 'running' && isRunStalled(join(taskDir, RUNS_DIR_NAME, row.latest_run))) row.stalled = true;
  }
  const open = row.done ? [] : needsInputOf(taskDir, layout.taskBus(project, task));
  if (open.length) row.open_questions = open.length;
  const { hold, ...usage } = taskUsageView(layout, project, task, row.done);
  Object.assign(row, usage);
  const criteria = taskCriteriaView(taskDir);
  if (criteria) row.criteria = criteria;
  const corrupt = taskCorruptReason(taskDir) ?? info?.corrupt_reason;
  if (corrupt) row.corrupt_reason = corrupt;
  row.status = summarizeTask({ status: row.status, running: row.status === 'running', openQuestions: open.length, hold, corruptReason: corrupt }).status;

  if (activity.enabled) {
    const start = info?.start_time && info.start_time.getTime() > ZERO_TIME_MS ? info.start_time : undefined;
    row.activity = collectActivity(
      taskDir,
      {
        runId: row.latest_run || undefined,
        status: row.status,
        startTime: start,
        outputPath: info?.output_path,
        stdoutPath: info?.stdout_path,
        stderrPath: info?.stderr_path,
      },
      activity.driftAfterMs,
    );
  }
  return row;
}

/** One task as `watch --json` reports it. */
export interface WatchTaskStatus {
  task_id: string;
  status: string;
  /** Seconds since the latest run started (its duration once it ended); -1 when no run time is known. */
  elapsed: number;
  done: boolean;
}


function latestReadableRunInfo(runsDir: string, runs: string[], probe: LivenessProbe): RunInfo | undefined {
  for (let i = runs.length - 1; i >= 0; i--) {
    const path = runInfoIn(runsDir, runs[i]);
    if (!existsSync(path)) continue;
    try {
      return readRunInfoReconciled(path, probe);
    } catch {
      // unreadable: try an older run
    }
  }
  return undefined;
}

/**
 * A task is complete for `watch` only when its Ralph loop is over (no live loop holds TASK.lock)
 * and its latest run has ended, or when DONE is written and no loop runs: one attempt ending while
 * the loop restarts it is `restarting`, DONE written while the loop waits for child runs is `finishing`.
 */
export function watchTaskStatus(layout: RunsLayout, project: string, task: string, probe: LivenessProbe, now = new Date()): WatchTaskStatus {
  const result: WatchTaskStatus = { task_id: task, status: 'unknown', elapsed: 0, done: false };
  const taskDir = layout.taskDir(project, task);
  const runsDir = taskRunsDir(taskDir);
  const runs = listRunNames(runsDir) ?? [];
  const info = runs.length ? latestReadableRunInfo(runsDir, runs, probe) : undefined;
  const loopAlive = isTaskLoopAlive(taskDir, probe);
  if (!info) {
    if (isTaskDone(taskDir) && !loopAlive) return { ...result, status: 'done', done: true, elapsed: -1 };
    if (runs.length === 0) {
      const deps = readDependsOn(taskDir);
      if (deps.length && blockedBy(layout.root, project, deps).length) result.status = 'blocked';
    }
    return result;
  }
  result.status = runState(info, taskDir);
  const start = info.start_time?.getTime() ?? ZERO_TIME_MS;
  const runEnded = ['completed', 'failed', 'done'].includes(info.status);
  if (start > ZERO_TIME_MS) {
    const end = info.end_time?.getTime() ?? ZERO_TIME_MS;
    const finished = info.status === 'completed' || info.status === 'failed';
    result.elapsed = Math.max(0, (finished && end > ZERO_TIME_MS ? end : now.getTime()) - start) / 1000;
  } else {
    result.elapsed = -1;
  }
  if (runEnded && loopAlive) {
    result.status = isTaskDone(taskDir) ? 'finishing' : 'restarting';
    return result;
  }
  result.done = runEnded;
  return result;
}

/** The task folder (DONE, TASK.lock released), its runs folder (new runs) and the newest run-info.yaml (status changes). */
export function watchedTaskPaths(runsDir: string): string[] {
  const runs = listRunNames(runsDir) ?? [];
  const taskDir = dirname(runsDir);
  return [taskDir, join(taskDir, TASK_LOCK_FILE), runsDir, ...(runs.length ? [runInfoIn(runsDir, runs[runs.length - 1])] : [])];
}
