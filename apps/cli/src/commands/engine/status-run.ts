/**
 * `run-agent status` (plain: no NestJS), run by StatusCommand and by the Nest-free hot path
 * (apps/cli/src/fast) with the seams of their composition root.
 */
import { buildRunForest, buildStatusRow, criteriaCell, latestRunTree, TASK_STATUS_FILTER_NAMES, taskStatusFilter, worktreeCells, type RunNode, type StatusRow } from '@app/runner';
import {
  existingProjectDir,
  existingTaskDir,
  invalidChoice,
  type LivenessProbe,
  type StorageIndexFactory,
  validateProjectId,
  validateTaskId,
} from '@app/storage';
import type { StatusOptions } from './status-flags';
import { UsageError } from '../../common/cli-errors';
import type { TextOut } from '@app/boot';
import {
  DEFAULT_DRIFT_AFTER_MS,
  formatAge,
  formatBusSummary,
  formatLocalTimestamp,
  safeField,
} from './support/activity';
import { durationFlag } from './support/options';
import { checkTreeFlags, renderRunTree } from './support/run-tree-view';
import { resolveRoot } from './support/runs-root';
import { inferScope } from './support/scope';
import { formatTable } from './support/table';
import { listRunNames } from './support/task-state';

function emptyMessage(project: string, task: string | undefined, filter: string): string {
  if (filter) return task ? `No status rows matched --status "${filter}" for task ${task}.` : `No status rows matched --status "${filter}" in project ${project}.`;
  return task ? `No status rows found for task ${task}.` : `No status rows found in project ${project}.`;
}

const show = (v: number | boolean | null | string | undefined): string => (v === null || v === undefined || v === '' ? '-' : String(v));

/** What `status` takes from its composition root. */
export interface StatusSeams {
  probe: LivenessProbe;
  indexFor: StorageIndexFactory;
  /** Where the command prints: process.stdout, or fdStdout() on the hot path. */
  stdout: TextOut;
}

export async function runStatus(options: StatusOptions, seams: StatusSeams): Promise<void> {
  if (options.json && options.concise) throw new UsageError('--concise cannot be used with --json');
  if (options.tree && options.concise) throw new UsageError('--tree cannot be used with --concise');
  checkTreeFlags({ ...options }, { activity: '--activity', usage: '--usage' });
  const driftAfterMs = options.driftAfter !== undefined ? durationFlag(options.driftAfter, '--drift-after') : DEFAULT_DRIFT_AFTER_MS;
  const root = resolveRoot(options.root, process.env, options.config);
  const scope = inferScope({ project: options.project }, { root });
  if (!scope.project) throw new UsageError('--project is required (or run inside a task: JRUN_PROJECT_ID or a task working directory)');
  const project = validateProjectId(scope.project);
  const task = options.task?.trim() ? validateTaskId(options.task.trim()) : undefined;
  const filterText = (options.status ?? '').trim();
  const filter = filterText.toLowerCase();
  const keep = filter ? taskStatusFilter(filter) : undefined;
  if (filter && !keep) throw new UsageError(invalidChoice('--status', filterText, TASK_STATUS_FILTER_NAMES));

  const index = seams.indexFor(root);
  const layout = index.layout;
  const projectDir = existingProjectDir(layout, project);
  let tasks: string[];
  if (task) {
    existingTaskDir(layout, project, task);
    tasks = [task];
  } else {
    tasks = listRunNames(projectDir) ?? [];
  }

  const probe = seams.probe;
  const activity = { enabled: !!options.activity, driftAfterMs };
  const rows = tasks.map((t) => buildStatusRow(layout, project, t, probe, activity)).filter((r) => !keep || keep(r));
  if (options.tree) {
    const forest = buildRunForest(index, project);
    seams.stdout.write(renderStatusTree(rows.map((row) => ({ row, tree: latestRunTree(forest, row.task_id) })), !!options.json));
    return;
  }
  seams.stdout.write(renderStatus(rows, { ...options, project, task, filter: filterText }));
}

/** `status --tree`: every task row with the tree of its latest root run (JSON: the row plus `tree`). */
export function renderStatusTree(rows: { row: StatusRow; tree: RunNode[] }[], json: boolean): string {
  if (json) return `${JSON.stringify({ tasks: rows.map(({ row, tree }) => ({ ...row, tree })) }, null, 2)}\n`;
  return renderRunTree(rows.map(({ row, tree }) => ({ cells: [row.task_id, row.status, show(row.exit_code), show(row.agent_name)], task_id: row.task_id, tree })));
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
  const criteria = rows.some((r) => r.criteria);
  if (criteria) header.push('CRITERIA');
  const queued = rows.some((r) => r.queued_reason);
  if (queued) header.push('QUEUED_REASON');
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
    if (criteria) cells.push(criteriaCell(r.criteria));
    if (queued) cells.push(safeField(r.queued_reason));
    return cells;
  });
  let out = formatTable([header, ...lines]);
  if (rows.length === 0 && opts.filter) out += `${emptyMessage(opts.project, opts.task, opts.filter)}\n`;
  return out;
}
