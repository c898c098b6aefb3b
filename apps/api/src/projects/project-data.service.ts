import { Inject, Injectable } from '@nestjs/common';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BUDGET_EXCEEDED_FILE, isRunStalled, NEEDS_INPUT_FILE, needsInputOf, PAUSED_FILE, RATE_LIMITED_FILE, summarizeTask, taskCorruptReason, taskUsageView, type ProjectTaskSummary, readExtraRuns, SortedRunsMemo, byStartThenId, runActivity, type RunRecord, PROJECT_ROOT_MARKER, THREAD_LINK_FILE } from '@app/runner';
import { blockedBy, DONE_FILE, hasDoneFile, LIVENESS_PROBE, LivenessProbe, readDependsOn, readRecordText, RunInfo, TASK_CONFIG_FILE, TASK_PROMPT_FILE, RUNS_DIR_NAME } from '@app/storage';
import { replicaRunView, type PendingTask } from '@app/scaleout';
import { API_CONTEXT, ApiContext } from '../common/api-context';
import { formatTime } from '../common/go-format';
import { confine } from '../security/path-confinement';
import { PlannerBridge } from '../tasks/planner-bridge';

const TASK_MARKERS = [TASK_PROMPT_FILE, TASK_CONFIG_FILE, RUNS_DIR_NAME];

/** One task of a project as the project routes see it (the runner's view type). */
export type TaskSummary = ProjectTaskSummary;

/** Read model over the runs root for the project routes (api.md §1.3, §A.2). */
@Injectable()
export class ProjectDataService {
  constructor(
    @Inject(API_CONTEXT) private readonly ctx: ApiContext,
    private readonly planner: PlannerBridge,
    @Inject(LIVENESS_PROBE) private readonly probe: LivenessProbe,
  ) {}

  get root(): string {
    return this.ctx.root;
  }

  get layout() {
    return this.ctx.layout;
  }

  get writers() {
    return this.ctx.writers;
  }

  get scaleout() {
    return this.ctx.scaleout;
  }

  get stopGraceMs(): number | undefined {
    return this.ctx.stopGraceMs;
  }


  /** Project folders under the root. */
  projectIds(): string[] {
    const ids = this.ctx.index.listProjects();
    const pending = this.ctx.scaleout?.pending.list().map((t) => t.projectId).filter((p) => !ids.includes(p));
    return pending?.length ? [...ids, ...new Set(pending)].sort() : ids;
  }

  /** Runs of storage.extra_roots (listed and counted, never streamed; their files are outside the root). */
  extraRuns(): RunRecord[] {
    const roots = this.ctx.config?.storage?.extra_roots ?? [];
    return roots.length ? readExtraRuns(roots, this.probe) : [];
  }

  /** Projects seen in the root or in extra-root runs. */
  allProjectIds(): string[] {
    return [...new Set([...this.projectIds(), ...this.extraRuns().map((r) => r.projectId)])].sort();
  }

  projectDir(p: string): string {
    return confine(this.ctx.root, this.ctx.layout.projectDir(p), 'project path');
  }

  taskDir(p: string, t: string): string {
    return confine(this.ctx.root, this.ctx.layout.taskDir(p, t), 'task path');
  }

  projectExists(p: string): boolean {
    return isDir(this.projectDir(p));
  }

  taskExists(p: string, t: string): boolean {
    return isDir(this.taskDir(p, t)) || this.pending(p, t) !== undefined;
  }

  /** With --nats: a task accepted but not reported by a worker yet (nothing of it in the replica). */
  pending(p: string, t: string): PendingTask | undefined {
    return this.ctx.scaleout?.pending.get(p, t);
  }

  /** Every run of a project that has a run-info.yaml (extra roots included), by start time then run id. */
  runs(p: string, t?: string): RunRecord[] {
    const out = this.rootRuns(p, t);
    for (const r of this.extraRuns()) if (r.projectId === p && (t === undefined || r.taskId === t)) out.push(r);
    return t === undefined ? this.projectOrder.sorted(p, out) : out.sort(byStartThenId);
  }

  /** A project's runs in start order, kept while the listing hands back the same run-info objects. */
  private readonly projectOrder = new SortedRunsMemo();

  /**
   * runs(p), shared by every request waiting for it (issue #15): a request asks for the next pass
   * over the project, which begins once the requests read in this event-loop turn are queued
   * (setImmediate). The pass begins after each of them arrived, so it sees every write that
   * finished before any of them was sent; with many listings in flight, one pass answers them
   * all. Callers must not modify the list.
   */
  sharedRuns(p: string): Promise<readonly RunRecord[]> {
    let pass = this.nextPass.get(p);
    if (!pass) {
      pass = new Promise((resolve, reject) => {
        setImmediate(() => {
          // from here on, a new request waits for a later pass
          this.nextPass.delete(p);
          try {
            resolve(this.runs(p));
          } catch (err) {
            reject(err);
          }
        });
      });
      this.nextPass.set(p, pass);
    }
    return pass;
  }

  private readonly nextPass = new Map<string, Promise<readonly RunRecord[]>>();

  private rootRuns(p: string, t?: string): RunRecord[] {
    const { index } = this.ctx;
    const out: RunRecord[] = [];
    const tasks = t === undefined ? index.listTasks(p) : [t];
    for (const task of tasks) {
      for (const { runId, dir, info } of index.taskRuns(p, task)) {
        if (info) out.push({ info: this.liveView(info, p, task), projectId: p, taskId: task, runId, dir });
      }
    }
    return out;
  }

  /**
   * With --nats a replicated `running` run is judged by its worker's heartbeats (as SSE does):
   * failed while no live worker lists its task, in this view only (the replica is not rewritten).
   */
  private liveView(info: RunInfo, p: string, t: string): RunInfo {
    const scaleout = this.ctx.scaleout;
    return scaleout && info.status === 'running' ? replicaRunView(info, this.ctx.layout.taskDir(p, t), scaleout.liveness) : info;
  }

  allRuns(): RunRecord[] {
    return [...this.projectIds().flatMap((p) => this.rootRuns(p)), ...this.extraRuns()].sort(byStartThenId);
  }

  findRun(runId: string): RunRecord | undefined {
    const loc = this.ctx.index.findRun(runId);
    if (!loc) return undefined;
    const info = this.ctx.index.runInfo(loc.project, loc.task, runId);
    return info ? { info: this.liveView(info, loc.project, loc.task), projectId: loc.project, taskId: loc.task, runId, dir: loc.dir } : undefined;
  }

  /** Task ids of a project: tasks with runs ∪ folders holding TASK.md, TASK-CONFIG.yaml or runs/. */
  taskIds(p: string, runs: readonly RunRecord[] = this.runs(p)): string[] {
    const ids = new Set(runs.map((r) => r.taskId));
    for (const pt of this.ctx.scaleout?.pending.list(p) ?? []) ids.add(pt.taskId);
    for (const t of this.ctx.index.listTasks(p)) {
      if (ids.has(t)) continue; // has runs: no marker check needed
      const dir = path.join(this.projectDir(p), t);
      if (TASK_MARKERS.some((m) => fs.existsSync(path.join(dir, m)))) ids.add(t);
    }
    return [...ids].sort();
  }

  hasTaskPrompt(p: string, t: string): boolean {
    return fs.existsSync(path.join(this.taskDir(p, t), TASK_PROMPT_FILE)) || this.pending(p, t) !== undefined;
  }

  marker(p: string): { root: string; mtime: Date } | undefined {
    try {
      const file = path.join(this.projectDir(p), PROJECT_ROOT_MARKER);
      const st = fs.statSync(file);
      return { root: readRecordText(file).trim(), mtime: st.mtime };
    } catch {
      return undefined;
    }
  }

  /** Project (api.md §1.3 #21/#24); undefined when it has neither runs nor a PROJECT-ROOT.txt. */
  project(p: string, runs = this.runs(p)) {
    const marker = this.marker(p);
    if (runs.length === 0 && !marker) return undefined;
    let last = 0;
    for (const r of runs) last = Math.max(last, runActivity(r.info));
    if (marker) last = Math.max(last, marker.mtime.getTime());
    const outside = runs.map((r) => r.info.cwd).find((cwd) => cwd && !this.ctx.layout.contains(cwd));
    return {
      id: p,
      last_activity: formatTime(new Date(last || 0)),
      task_count: new Set(runs.map((r) => r.taskId)).size,
      project_root: outside || marker?.root || undefined,
      _last: last,
    };
  }

  /** A task's runs grouped by task id, each group in the order of `runs`. */
  runsByTask(runs: readonly RunRecord[]): Map<string, RunRecord[]> {
    const out = new Map<string, RunRecord[]>();
    for (const r of runs) {
      const list = out.get(r.taskId);
      if (list) list.push(r);
      else out.set(r.taskId, [r]);
    }
    return out;
  }

  /** When a task was created (the task list's order): its first run's start, else TASK.md's mtime. */
  createdAt(p: string, t: string, runs: RunRecord[]): Date {
    const firstStart = runs.length ? runs[0].info.start_time : undefined;
    return firstStart && firstStart.getUTCFullYear() > 1 ? firstStart : (mtime(path.join(this.taskDir(p, t), TASK_PROMPT_FILE)) ?? new Date(0));
  }

  /** Status, state and dependency view of one task (api.md §A.2, planner overlay §6.1). */
  task(p: string, t: string, runs = this.runs(p, t)): TaskSummary {
    const dir = this.taskDir(p, t);
    // the folder's listing (cached by mtime in the index) says which marker files exist: absent ones are not probed
    const has = presentIn(this.ctx.index.entryNames(dir));
    const done = has(DONE_FILE) && hasDoneFile(dir);
    let dependsOn: string[] = [];
    try {
      dependsOn = has(TASK_CONFIG_FILE) ? readDependsOn(dir) : [];
    } catch {
      dependsOn = []; // the task is shown as corrupt below, with the reason
    }
    const running = runs.some((r) => r.info.status === 'running');
    const failed = runs.some((r) => r.info.status === 'failed');
    const blocked = !done && runs.length === 0 && dependsOn.length > 0 ? safeBlockedBy(this.ctx.root, p, dependsOn) : [];
    let status: string;
    let state: string;
    if (running) {
      status = failed ? 'partial_failure' : 'running';
      state = 'running';
    } else if (done) {
      status = 'all_finished';
      state = 'done';
    } else if (blocked.length > 0) {
      status = 'blocked';
      state = 'blocked';
    } else {
      status = runs.length ? runs[runs.length - 1].info.status : '-';
      state = 'idle';
    }
    let v1Status = running ? (failed ? 'partial_failure' : 'running') : done ? 'all_finished' : blocked.length ? 'blocked' : 'idle';
    const queuePosition = !done && !running ? this.planner.queuePosition(p, t) : undefined;
    if (queuePosition && status !== 'partial_failure') {
      status = 'queued';
      state = 'queued';
      v1Status = 'queued';
    }
    // a task submitted to a scale-out worker whose first record has not arrived yet
    const queued = !done && runs.length === 0 ? this.pending(p, t) : undefined;
    if (queued) {
      dependsOn = queued.dependsOn;
      blocked.splice(0, blocked.length, ...queued.blockedBy);
      status = state = v1Status = blocked.length ? 'blocked' : 'queued';
    }
    const openQuestions = done || !has(NEEDS_INPUT_FILE) ? [] : needsInputOf(dir, this.ctx.layout.taskBus(p, t));
    const markers = has(PAUSED_FILE) || has(RATE_LIMITED_FILE) || has(BUDGET_EXCEEDED_FILE) || presentIn(this.ctx.index.entryNames(path.dirname(dir)))(PAUSED_FILE);
    const usage = taskUsageView(this.ctx.layout, p, t, done, runs.map((r) => r.info), markers ? undefined : {});
    const latest = runs[runs.length - 1];
    // one bad record is that record's problem: the task shows `corrupt` and why, the rest answers as usual
    const corruptReason = taskCorruptReason(dir, has) ?? latest?.info.corrupt_reason;
    // the one task-status rule (libs/runner/src/status/task-summary.ts) decides over the runs' status
    const shown = summarizeTask({ status, running, openQuestions: openQuestions.length, hold: usage.hold, corruptReason });
    if (shown.by) status = state = v1Status = shown.status;
    const stalled = latest?.info.status === 'running' && isRunStalled(latest.dir);
    const taskMdMtime = has(TASK_PROMPT_FILE) ? mtime(path.join(dir, TASK_PROMPT_FILE)) : undefined;
    let last = 0;
    for (const r of runs) last = Math.max(last, runActivity(r.info));
    return {
      projectId: p,
      taskId: t,
      status,
      state,
      v1Status,
      done,
      dependsOn,
      blockedBy: blocked,
      queuePosition,
      lastActivity: last ? new Date(last) : (taskMdMtime ?? queued?.createdAt ?? new Date(0)),
      createdAt: queued?.createdAt ?? this.createdAt(p, t, runs),
      runs,
      threadParent: has(THREAD_LINK_FILE) ? readThreadParent(dir) : null,
      openQuestions,
      stalled,
      usage,
      corruptReason,
    };
  }
}



/** Whether a name is in a folder listing; with no listing (not a folder, or unreadable) every file is probed. */
function presentIn(names: ReadonlySet<string> | undefined): (name: string) => boolean {
  return names ? (name) => names.has(name) : () => true;
}

function safeBlockedBy(root: string, p: string, deps: string[]): string[] {
  try {
    return blockedBy(root, p, deps);
  } catch {
    return deps;
  }
}

export function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function mtime(p: string): Date | undefined {
  try {
    return fs.statSync(p, { throwIfNoEntry: false })?.mtime;
  } catch {
    return undefined;
  }
}

/** TASK-THREAD-LINK.yaml → ThreadParent; null when the task is not threaded. */
function readThreadParent(taskDir: string): Record<string, string> | null {
  let text: string;
  try {
    text = readRecordText(path.join(taskDir, THREAD_LINK_FILE));
  } catch {
    return null;
  }
  const get = (k: string) => {
    const m = new RegExp(`^${k}:\\s*"?([^"\\n]*)"?\\s*$`, 'm').exec(text);
    return m ? m[1] : '';
  };
  const parent: Record<string, string> = {
    project_id: get('parent_project_id'),
    task_id: get('parent_task_id'),
    run_id: get('parent_run_id'),
    message_id: get('parent_message_id'),
  };
  const type = get('parent_message_type');
  if (type) parent.message_type = type;
  return parent;
}

export type { RunInfo };
