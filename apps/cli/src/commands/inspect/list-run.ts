/**
 * `run-agent list` (plain: no NestJS), run by ListCommand and by the Nest-free hot path
 * (apps/cli/src/fast) with the seams of their composition root.
 */
import { existingProjectDir, existingTaskDir, invalidChoice, isDirectory, type StorageIndexFactory, validateProjectId, validateSegment } from '@app/storage';
import type { ListOptions } from './list-flags';
import { UsageError } from '../../common/cli-errors';
import type { TextOut } from '@app/boot';
import { DEFAULT_DRIFT_AFTER_MS, formatAge, formatBusSummary, formatLocalTimestamp, safeField } from '../engine/support/activity';
import { durationFlag } from '../engine/support/options';
import { resolveRoot } from '../engine/support/runs-root';
import { formatTable, localMinute } from '../engine/support/table';
import { goJson } from './go-json';
import { buildRunForest, buildRunRow, buildTaskRow, filterTaskRows, RunRow, runsDirOf, TASK_STATUS_FILTER_NAMES, taskStatusFilter, TaskRow } from '@app/runner';
import { checkTreeFlags, renderRunTree } from '../engine/support/run-tree-view';

function renderTasks(rows: TaskRow[], withActivity: boolean, withUsage = false): string {
  const header = ['TASK_ID', 'RUNS', 'LATEST_STATUS', 'DONE', 'BLOCKED_BY', 'LAST_ACTIVITY'];
  if (withActivity) header.push('LAST_BUS', 'LAST_OUTPUT', 'MEANINGFUL_AGE', 'DRIFT_RISK', 'DRIFT_REASON');
  if (withUsage) header.push('TOKENS', 'COST_USD');
  const lines = rows.map((r) => {
    const last = r.last_activity ? localMinute(new Date(r.last_activity)) : '-';
    const cells = [r.task_id, String(r.runs), r.latest_status, r.done ? 'DONE' : '-', r.blocked_by?.join(',') || '-', last];
    if (withActivity) {
      const a = r.activity;
      cells.push(
        formatBusSummary(a?.latest_bus_message),
        formatLocalTimestamp(a?.latest_output_activity_at),
        formatAge(a?.meaningful_signal_age_seconds),
        a ? (a.analysis_drift_risk ? 'risk' : 'ok') : '-',
        safeField(a?.drift_reason),
      );
    }
    if (withUsage) cells.push(r.usage ? String(r.usage.total_tokens) : '-', r.usage?.cost_usd !== undefined ? String(r.usage.cost_usd) : '-');
    return cells;
  });
  return formatTable([header, ...lines]);
}

function renderRuns(rows: RunRow[]): string {
  return formatTable([
    ['RUN_ID', 'STATUS', 'EXIT_CODE', 'STARTED', 'DURATION', 'AGENT'],
    ...rows.map((r) => [r.run_id, r.status, r.exit_code === null ? '-' : String(r.exit_code), r.started, r.duration, r.agent ?? '-']),
  ]);
}

/** What `list` takes from its composition root. */
export interface ListSeams {
  indexFor: StorageIndexFactory;
  /** Where the command prints: process.stdout, or fdStdout() on the hot path. */
  stdout: TextOut;
}

export async function runList(options: ListOptions, seams: ListSeams): Promise<void> {
  const project = options.project?.trim() || undefined;
  const task = options.task?.trim() || undefined;
  if (task && !project) throw new UsageError('--task requires --project');
  if (options.tree && !project) throw new UsageError('--tree requires --project');
  checkTreeFlags({ ...options }, { activity: '--activity', usage: '--usage' });
  try {
    if (project) validateProjectId(project);
    if (task) validateSegment(task, 'task');
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const filter = (options.status ?? '').trim();
  if (filter && !taskStatusFilter(filter)) throw new UsageError(invalidChoice('--status', filter, TASK_STATUS_FILTER_NAMES));
  const driftAfterMs = options.driftAfter !== undefined ? durationFlag(options.driftAfter, '--drift-after') : DEFAULT_DRIFT_AFTER_MS;
  const root = resolveRoot(options.root, process.env, options.config);
  const index = seams.indexFor(root);

  if (!project) {
    const projects = isDirectory(root) ? index.listProjects() : [];
    if (!projects.length && !options.json) {
      process.stderr.write(`no runs yet in ${root} (start one with \`run-agent task\`)\n`);
      return;
    }
    seams.stdout.write(options.json ? goJson({ projects: projects.length ? projects : null }) : projects.map((p) => `${p}\n`).join(''));
    return;
  }

  if (task) {
    existingTaskDir(index.layout, project, task);
    if (!isDirectory(runsDirOf(index, project, task))) throw new Error(`no runs found for project ${project} task ${task}`);
    if (options.tree) {
      const tree = buildRunForest(index, project).get(task) ?? [];
      const status = buildTaskRow(index, project, task).latest_status;
      seams.stdout.write(options.json ? goJson({ runs: tree.length ? tree : null }) : renderRunTree([{ cells: [task, status], task_id: task, tree }]));
      return;
    }
    const rows = index.listRuns(project, task).map((run) => buildRunRow(index, project, task, run));
    seams.stdout.write(options.json ? goJson({ runs: rows.length ? rows : null }) : renderRuns(rows));
    return;
  }

  existingProjectDir(index.layout, project);
  const activity = options.activity ? { driftAfterMs } : undefined;
  let rows = index.listTasks(project).map((t) => buildTaskRow(index, project, t, activity));
  rows = filterTaskRows(rows, filter) ?? rows;
  if (options.tree) {
    const forest = buildRunForest(index, project);
    const trees = rows.map((r) => ({ row: r, tree: forest.get(r.task_id) ?? [] }));
    if (options.json) seams.stdout.write(goJson({ tasks: trees.length ? trees.map(({ row, tree }) => ({ ...row, tree })) : null }));
    else seams.stdout.write(renderRunTree(trees.map(({ row, tree }) => ({ cells: [row.task_id, row.latest_status], task_id: row.task_id, tree }))));
    return;
  }
  seams.stdout.write(options.json ? goJson({ tasks: rows.length ? rows : null }) : renderTasks(rows, !!options.activity, !!options.usage));
}
