import * as fs from 'node:fs';
import * as path from 'node:path';
import { formatTime, isZeroWireTime as isZeroTime, runState, type RunInfo, RUN_OUTPUT_FILE } from '@app/storage';
import type { BusMessage } from '@app/messagebus';
import type { AddedRunFields, BusMessage as RestMessage, FlatRun, OpenQuestion as RestQuestion, ProjectRun, RunCriteriaView, RunFile, RunV1 } from '@app/contracts';
import { readEgressBytes } from '../usage/egress-bytes';
import { readWorktreeRecord, taskQueueEntry } from '@app/worktree';
import type { OpenQuestion } from '../needs-input/questions';

/** A run found on disk with its location. */
export interface RunRecord {
  info: RunInfo;
  projectId: string;
  taskId: string;
  runId: string;
  dir: string;
}

const RUN_FILES: { name: string; label: string; pathOf: (r: RunRecord) => string | undefined }[] = [
  { name: RUN_OUTPUT_FILE, label: 'output', pathOf: (r) => outputPath(r) },
  { name: 'stdout', label: 'stdout', pathOf: (r) => r.info.stdout_path },
  { name: 'stderr', label: 'stderr', pathOf: (r) => r.info.stderr_path },
  { name: 'prompt', label: 'prompt', pathOf: (r) => r.info.prompt_path },
];

export const RUN_FILE_NAMES = RUN_FILES.map((f) => f.name);

export function outputPath(r: RunRecord): string | undefined {
  if (r.info.output_path) return r.info.output_path;
  return r.info.stdout_path ? path.join(path.dirname(r.info.stdout_path), RUN_OUTPUT_FILE) : undefined;
}

export function runFilePath(r: RunRecord, name: string): string | undefined {
  return RUN_FILES.find((f) => f.name === name)?.pathOf(r);
}

function runFiles(r: RunRecord): RunFile[] {
  const out: RunFile[] = [];
  for (const f of RUN_FILES) {
    const p = f.pathOf(r);
    if (!p) continue;
    try {
      const st = fs.statSync(p);
      if (st.isFile()) out.push({ name: f.name, label: f.label, size: st.size || undefined });
    } catch {
      // absent files are not listed
    }
  }
  return out;
}

const orUndefined = (s: string | undefined) => (s ? s : undefined);
const exitCodeOf = (i: RunInfo) => (i.status === 'running' ? -1 : i.exit_code);

/**
 * Added fields (issue #12; upstream clients ignore them, `status`/`exit_code` keep upstream's
 * values): `display_status` names stopped and cancelled runs (status `failed`, exit 143 upstream) and
 * `agent_name` is the configured agent the run used.
 */
export function addedRunFields(r: RunRecord): AddedRunFields {
  const displayStatus = runState(r.info, path.dirname(path.dirname(r.dir)));
  return {
    display_status: displayStatus,
    queued_reason: displayStatus === 'queued' ? r.info.queued_reason : undefined,
    agent_name: orUndefined(r.info.agent_name),
    corrupt_reason: r.info.corrupt_reason,
  };
}

/** `sandbox` and `egress_bytes` of a sandboxed run (its egress-bytes.json, written when its proxy starts and stops). */
function sandboxFields(runDir: string): Pick<ProjectRun & FlatRun, 'sandbox' | 'egress_bytes'> {
  const bytes = readEgressBytes(runDir);
  return bytes ? { sandbox: 'bwrap', egress_bytes: bytes } : {};
}

/** The completion criteria checked when the run's agent wrote DONE (issue #33), as every run view shows them. */
function runCriteria(i: RunInfo): RunCriteriaView | undefined {
  return i.criteria ? { ...i.criteria, checked_at: formatTime(i.criteria.checked_at) } : undefined;
}

/** ProjectRun (api.md §1.3) plus the D12 superset the React run view reads. */
export function toProjectRun(r: RunRecord, withFiles: boolean): ProjectRun {
  const i = r.info;
  return {
    id: r.runId,
    run_id: r.runId,
    project_id: i.project_id || r.projectId,
    task_id: i.task_id || r.taskId,
    agent: i.agent,
    agent_version: orUndefined(i.agent_version),
    status: i.status,
    ...addedRunFields(r),
    process_ownership: i.process_ownership === 'external' ? 'external' : 'managed',
    exit_code: exitCodeOf(i),
    start_time: formatTime(i.start_time),
    end_time: isZeroTime(i.end_time) ? undefined : formatTime(i.end_time),
    parent_run_id: orUndefined(i.parent_run_id),
    previous_run_id: orUndefined(i.previous_run_id),
    error_summary: orUndefined(i.error_summary),
    version: i.version,
    cwd: orUndefined(i.cwd),
    pid: i.pid,
    pgid: i.pgid,
    commandline: orUndefined(i.commandline),
    session_id: orUndefined(i.session_id),
    resume_at: i.resume_at ? formatTime(i.resume_at) : undefined,
    usage: i.usage,
    criteria: runCriteria(i),
    ...sandboxFields(r.dir),
    files: withFiles ? runFiles(r) : undefined,
  };
}

/** RunV1 (#11, #13, #14): end_time always present, exit_code omitted when 0. */
export function toRunV1(r: RunRecord): RunV1 {
  const i = r.info;
  const exit = exitCodeOf(i);
  return {
    run_id: r.runId,
    project_id: i.project_id || r.projectId,
    task_id: i.task_id || r.taskId,
    status: i.status,
    ...addedRunFields(r),
    process_ownership: orUndefined(i.process_ownership),
    start_time: formatTime(i.start_time),
    end_time: formatTime(i.end_time),
    exit_code: exit === 0 ? undefined : exit,
    agent_version: orUndefined(i.agent_version),
    error_summary: orUndefined(i.error_summary),
    criteria: runCriteria(i),
  };
}

export function toFlatRun(r: RunRecord): FlatRun {
  const i = r.info;
  return {
    id: r.runId,
    task_id: i.task_id || r.taskId,
    agent: i.agent,
    status: i.status,
    ...addedRunFields(r),
    exit_code: exitCodeOf(i),
    start_time: formatTime(i.start_time),
    end_time: isZeroTime(i.end_time) ? undefined : formatTime(i.end_time),
    parent_run_id: orUndefined(i.parent_run_id),
    previous_run_id: orUndefined(i.previous_run_id),
    // why a run failed (e.g. the task could not start): shown by the dashboard
    error_summary: orUndefined(i.error_summary),
    ...sandboxFields(r.dir),
  };
}

/** REST Message (api.md §8.3) with lower-case parents/links objects. */
export function toRestMessage(m: BusMessage): RestMessage {
  return {
    msg_id: m.msg_id,
    timestamp: formatTime(m.ts),
    type: m.type,
    project_id: m.project_id,
    task_id: orUndefined(m.task_id),
    run_id: orUndefined(m.run_id),
    issue_id: orUndefined(m.issue_id),
    parents: m.parents?.length ? m.parents.map((p) => ({ msg_id: p.msg_id, kind: orUndefined(p.kind), meta: p.meta })) : undefined,
    links: m.links?.length ? m.links.map((l) => ({ url: l.url, label: orUndefined(l.label), kind: orUndefined(l.kind) })) : undefined,
    meta: m.meta && Object.keys(m.meta).length ? m.meta : undefined,
    body: m.body,
  };
}

export function runActivity(i: RunInfo): number {
  const start = isZeroTime(i.start_time) ? 0 : i.start_time.getTime();
  const end = isZeroTime(i.end_time) ? 0 : i.end_time.getTime();
  return Math.max(start, end);
}

export function byStartThenId(a: RunRecord, b: RunRecord): number {
  const d = (isZeroTime(a.info.start_time) ? 0 : a.info.start_time.getTime()) - (isZeroTime(b.info.start_time) ? 0 : b.info.start_time.getTime());
  return d !== 0 ? d : a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0;
}

/** GET /api/v1/questions item (#17). */
export function toRestQuestion(q: OpenQuestion): RestQuestion {
  return { msg_id: q.msg_id, type: q.type, timestamp: formatTime(q.ts), project_id: q.project_id, task_id: q.task_id || undefined, run_id: q.run_id || undefined, body: q.body };
}

/** The worktree fields shown with a task (docs/worktrees.md); undefined for tasks without one or with a corrupt record (the task says why). */
export function worktreeView(taskDir: string) {
  let rec: ReturnType<typeof readWorktreeRecord>;
  try {
    rec = readWorktreeRecord(taskDir);
  } catch {
    return undefined; // the task is shown as `corrupt` with the reason (ProjectDataService.task)
  }
  if (!rec) return undefined;
  return {
    path: rec.path,
    branch: rec.branch,
    base_commit: rec.base_commit,
    base_branch: rec.base_branch || undefined,
    port: rec.port || undefined,
    paths: rec.paths.length ? rec.paths : undefined,
    merge_status: rec.merge_status,
    merge_detail: rec.merge_detail,
    merge_files: rec.merge_files?.length ? rec.merge_files : undefined,
    merged_commit: rec.merged_commit,
    setup_script: rec.setup_script,
    merge_queue: mergeQueueView(rec.repo, taskDir),
    removed: rec.removed_at ? true : undefined,
  };
}

/** The task's newest entry in its repository's durable merge queue (state, place, timestamps), if any. */
function mergeQueueView(repo: string, taskDir: string) {
  const e = taskQueueEntry(repo, path.resolve(taskDir));
  if (!e) return undefined;
  return { seq: e.seq, state: e.state, position: e.position, outcome: e.outcome, attempts: e.attempts, queued_at: e.queued_at, started_at: e.started_at, finished_at: e.finished_at, detail: e.detail };
}
