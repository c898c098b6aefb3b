import { Inject } from '@nestjs/common';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Command, Option } from 'nest-commander';
import { ScopeOptionParsers } from './support/scope-options';
import { isRunStalled, needsInputOf, queueDir, taskUsageView, type TaskUsageView } from '@app/runner';
import { blockedBy, isTaskDone, LIVENESS_PROBE, LivenessProbe, readDependsOn, readRunInfoReconciled, runInfoIn, RunsLayout, runState, shownExitCode, taskRunsDir, type RunInfo, validateProjectId, validateTaskId } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import {
  collectActivity,
  DEFAULT_DRIFT_AFTER_MS,
  formatAge,
  formatBusSummary,
  formatLocalTimestamp,
  safeField,
  type ActivitySignals,
} from './support/activity';
import { durationFlag } from './support/options';
import { resolveRoot } from './support/runs-root';
import { inferScope } from './support/scope';
import { formatTable } from './support/table';
import { listRunNames } from './support/task-state';
import { worktreeCells, worktreeStatus, type WorktreeStatus } from './support/worktree-status';

interface StatusOptions {
  config?: string;
  root?: string;
  project?: string;
  task?: string;
  status?: string;
  json?: boolean;
  concise?: boolean;
  activity?: boolean;
  usage?: boolean;
  driftAfter?: string;
}

/** One row of `status` (JSON field order as upstream). */
export interface StatusRow extends WorktreeStatus {
  task_id: string;
  status: string;
  exit_code: number | null;
  latest_run: string;
  done: boolean;
  pid_alive: boolean | null;
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
  const dependsOn = readDependsOn(taskDir);
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
      row.exit_code = shownExitCode(info);
      if (info.agent_name) row.agent_name = info.agent_name;
      row.pid_alive = row.status === 'running' && probe.isRunAlive(info);
    }
    // D13: a run waiting for a max_concurrent_runs slot leaves a queue marker.
    if ((row.status === 'unknown' || row.status === 'running') && existsSync(join(queueDir(layout.root), row.latest_run))) row.status = 'queued';
    if (row.status === 'running' && isRunStalled(join(taskDir, 'runs', row.latest_run))) row.stalled = true;
  }
  const open = row.done ? [] : needsInputOf(taskDir, layout.taskBus(project, task));
  if (open.length) {
    row.status = 'needs_input';
    row.open_questions = open.length;
  }
  const { hold, ...usage } = taskUsageView(layout.root, project, task, row.done);
  if (hold && !open.length && row.status !== 'running') row.status = hold;
  Object.assign(row, usage);

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

export function statusRowMatches(row: StatusRow, filter: string): boolean {
  switch (filter) {
    case 'active':
      return row.status.toLowerCase() === 'running';
    case 'done':
    case 'all_finished':
      return row.done;
    case 'pending':
      return row.status === '-';
    default:
      return row.status.toLowerCase() === filter;
  }
}

function emptyMessage(project: string, task: string | undefined, filter: string): string {
  if (filter) return task ? `No status rows matched --status "${filter}" for task ${task}.` : `No status rows matched --status "${filter}" in project ${project}.`;
  return task ? `No status rows found for task ${task}.` : `No status rows found in project ${project}.`;
}

const show = (v: number | boolean | null | string | undefined): string => (v === null || v === undefined || v === '' ? '-' : String(v));

@Command({
  name: 'status',
  description: 'Show the latest run status of every task of a project (or of one task)',
})
export class StatusCommand extends ScopeOptionParsers {
  constructor(@Inject(LIVENESS_PROBE) private readonly probe: LivenessProbe) {
    super();
  }

  async run(_params: string[], options: StatusOptions = {}): Promise<void> {
    if (options.json && options.concise) throw new UsageError('--concise cannot be used with --json');
    const driftAfterMs = options.driftAfter !== undefined ? durationFlag(options.driftAfter, '--drift-after') : DEFAULT_DRIFT_AFTER_MS;
    const root = resolveRoot(options.root, process.env, options.config);
    const scope = inferScope({ project: options.project }, { root });
    if (!scope.project) throw new UsageError('--project is required (or run inside a task: JRUN_PROJECT_ID or a task working directory)');
    const project = validateProjectId(scope.project);
    const task = options.task?.trim() ? validateTaskId(options.task.trim()) : undefined;
    const filterText = (options.status ?? '').trim();
    const filter = filterText.toLowerCase();

    const layout = new RunsLayout(root);
    const projectDir = layout.projectDir(project);
    const taskDirForFlag = task ? layout.taskDir(project, task) : undefined;
    if (!isDirectory(projectDir)) throw new Error(`project directory not found: ${projectDir}`);
    let tasks: string[];
    if (taskDirForFlag) {
      if (!isDirectory(taskDirForFlag)) throw new Error(`task directory not found: ${taskDirForFlag}`);
      tasks = [task as string];
    } else {
      tasks = listRunNames(projectDir) ?? [];
    }

    const probe = this.probe;
    const activity = { enabled: !!options.activity, driftAfterMs };
    const rows = tasks.map((t) => buildStatusRow(layout, project, t, probe, activity)).filter((r) => !filter || statusRowMatches(r, filter));
    process.stdout.write(renderStatus(rows, { ...options, project, task, filter: filterText }));
  }

  @Option({ flags: '--status <filter>', description: 'keep rows by status: running|active, completed, failed, stopped, cancelled, unknown, queued, blocked, needs_input, rate_limited, paused, budget_exceeded, done|all_finished, pending' })
  parseStatus(v: string): string {
    return v;
  }

  @Option({ flags: '--json', description: 'print {"tasks":[...]} as JSON' })
  parseJson(): boolean {
    return true;
  }

  @Option({ flags: '--concise', description: 'tab-separated rows without header: task_id status exit_code latest_run done pid_alive' })
  parseConcise(): boolean {
    return true;
  }

  @Option({ flags: '--activity', description: 'add activity signals: latest bus message, output activity, meaningful-signal age, drift risk' })
  parseActivity(): boolean {
    return true;
  }

  @Option({ flags: '--usage', description: 'add TOKENS (input + output) and COST_USD of each task\'s runs (--json always carries `usage`)' })
  parseUsage(): boolean {
    return true;
  }

  @Option({ flags: '--drift-after <duration>', description: 'with --activity: a running task without a FACT/DECISION/ERROR/REVIEW message for this long is at risk (default 20m)' })
  parseDriftAfter(v: string): string {
    return v;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export function renderStatus(
  rows: StatusRow[],
  opts: { json?: boolean; concise?: boolean; activity?: boolean; usage?: boolean; project: string; task?: string; filter: string },
): string {
  if (opts.json) return `${JSON.stringify({ tasks: rows }, null, 2)}\n`;
  if (opts.concise) {
    if (rows.length === 0) return `${emptyMessage(opts.project, opts.task, opts.filter)}\n`;
    return rows
      .map((r) => {
        const base = [r.task_id, r.status, show(r.exit_code), show(r.latest_run), String(r.done), show(r.pid_alive)];
        if (opts.activity) {
          const a = r.activity;
          base.push(
            formatAge(a?.meaningful_signal_age_seconds),
            a ? String(a.analysis_drift_risk) : '-',
            safeField(a?.latest_bus_message?.type),
            safeField(a?.latest_bus_message?.timestamp),
            safeField(a?.latest_bus_message?.body_preview),
            safeField(a?.latest_output_activity_at),
          );
        }
        return `${base.join('\t')}\n`;
      })
      .join('');
  }
  const header = ['TASK_ID', 'STATUS', 'EXIT_CODE', 'LATEST_RUN', 'DONE', 'PID_ALIVE', 'BLOCKED_BY'];
  if (opts.usage) header.push('TOKENS', 'COST_USD');
  if (opts.activity) header.push('LAST_BUS', 'LAST_OUTPUT', 'MEANINGFUL_AGE', 'DRIFT_RISK', 'DRIFT_REASON');
  const worktrees = rows.some((r) => r.branch);
  if (worktrees) header.push('BRANCH', 'MERGE');
  const lines = rows.map((r) => {
    const cells = [r.task_id, r.status, show(r.exit_code), show(r.latest_run), String(r.done), show(r.pid_alive), r.blocked_by?.length ? r.blocked_by.join(',') : '-'];
    if (opts.usage) cells.push(show(r.usage?.total_tokens), show(r.usage?.cost_usd));
    if (opts.activity) {
      const a = r.activity;
      cells.push(
        safeField(formatBusSummary(a?.latest_bus_message)),
        formatLocalTimestamp(a?.latest_output_activity_at),
        formatAge(a?.meaningful_signal_age_seconds),
        a ? (a.analysis_drift_risk ? 'risk' : 'ok') : '-',
        safeField(a?.drift_reason),
      );
    }
    if (worktrees) cells.push(...worktreeCells(r));
    return cells;
  });
  let out = formatTable([header, ...lines]);
  if (rows.length === 0 && opts.filter) out += `${emptyMessage(opts.project, opts.task, opts.filter)}\n`;
  return out;
}
