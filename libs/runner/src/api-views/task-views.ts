import { formatTime, RUN_OUTPUT_FILE } from '@app/storage';
import { taskCriteriaView } from '../criteria/criteria-view';
import type { OpenQuestion } from '../needs-input/questions';
import type { TaskUsageView } from '../usage/task-view';
import { fileSizeOf } from './project-files';
import { addedRunFields, runFilePath, toProjectRun, toRestQuestion, worktreeView, type RunRecord } from './shapes';

/** One task of a project as the API's project routes see it (api.md §A.2, planner overlay §6.1). */
export interface ProjectTaskSummary {
  projectId: string;
  taskId: string;
  status: string;
  state: string;
  v1Status: string;
  done: boolean;
  dependsOn: string[];
  blockedBy: string[];
  queuePosition?: number;
  lastActivity: Date;
  createdAt: Date;
  runs: RunRecord[];
  threadParent: Record<string, string> | null;
  /** needs_input (#17): open QUESTION/BLOCKED messages of the task bus. */
  openQuestions: OpenQuestion[];
  /** The running latest run is flagged stalled. */
  stalled: boolean;
  /** Status `corrupt` (issue #29): why a record file of the task (or its latest run-info) cannot be parsed. */
  corruptReason?: string;
  /** Usage of the task's runs and its hold (rate_limited, paused, budget_exceeded; #18). */
  usage: TaskUsageView;
}

/** #18: usage of the task's runs, rate-limit reset, pause and budget state (omitted when empty). */
function usageFields(v: TaskUsageView): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (v.usage) out.usage = v.usage;
  if (v.resume_at) out.resume_at = v.resume_at;
  if (v.paused) out.paused = v.paused;
  if (v.budget_exceeded) out.budget_exceeded = v.budget_exceeded;
  return out;
}

/** `include_files` of the task and run routes: on unless 0, false, no or off. */
export function includeFilesQuery(text: string | undefined): boolean {
  return !['0', 'false', 'no', 'off'].includes((text ?? '').trim().toLowerCase());
}

/** An item of GET /api/projects/{p}/tasks (#32). */
export function taskListItem(t: ProjectTaskSummary): Record<string, unknown> {
  const counts: Record<string, number> = {};
  for (const r of t.runs) counts[r.info.status] = (counts[r.info.status] ?? 0) + 1;
  const item: Record<string, unknown> = {
    id: t.taskId,
    project_id: t.projectId,
    status: t.status,
    last_activity: formatTime(t.lastActivity),
    run_count: t.runs.length,
    run_counts: counts,
    depends_on: t.dependsOn.length ? t.dependsOn : null,
    blocked_by: t.blockedBy.length ? t.blockedBy : null,
    thread_parent: t.threadParent,
    done: t.done,
  };
  if (t.corruptReason) item.corrupt_reason = t.corruptReason;
  if (t.openQuestions.length) item.open_questions = t.openQuestions.length;
  if (t.stalled) item.stalled = true;
  Object.assign(item, usageFields(t.usage));
  const last = t.runs[t.runs.length - 1];
  if (last) {
    item.last_run_status = last.info.status;
    item.last_run_exit_code = last.info.status === 'running' ? -1 : last.info.exit_code;
    const added = addedRunFields(last);
    item.last_run_display_status = added.display_status;
    if (added.agent_name) item.last_run_agent_name = added.agent_name;
    const out = runFilePath(last, RUN_OUTPUT_FILE);
    item.last_run_output_size = Math.max(fileSizeOf(last.info.stdout_path), fileSizeOf(out));
  }
  if (t.queuePosition) item.queue_position = t.queuePosition;
  return item;
}

/** GET /api/projects/{p}/tasks/{t} (#33): the summary of the task in `taskDir`, with its runs. */
export function taskDetailView(s: ProjectTaskSummary, taskDir: string, withFiles: boolean) {
  return {
    id: s.taskId,
    project_id: s.projectId,
    status: s.status,
    queue_position: s.queuePosition,
    last_activity: formatTime(s.lastActivity),
    created_at: formatTime(s.createdAt),
    done: s.done,
    state: s.state,
    depends_on: s.dependsOn.length ? s.dependsOn : undefined,
    blocked_by: s.blockedBy.length ? s.blockedBy : undefined,
    thread_parent: s.threadParent ?? undefined,
    open_questions: s.openQuestions.length ? s.openQuestions.map(toRestQuestion) : undefined,
    stalled: s.stalled || undefined,
    corrupt_reason: s.corruptReason,
    worktree: worktreeView(taskDir),
    criteria: taskCriteriaView(taskDir, s.runs),
    ...usageFields(s.usage),
    runs: s.runs.map((r) => toProjectRun(r, withFiles)),
  };
}
