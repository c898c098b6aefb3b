import { Controller, Logger, Delete, Get, Headers, HttpCode, MessageEvent, Param, Post, Query, Req, Sse, SseSignal } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import * as path from 'node:path';
import { Observable } from 'rxjs';
import { RunnerService, taskCriteriaView, taskStatusFilter, type TaskUsageView, addedRunFields, RUN_FILE_NAMES, runFilePath, type RunRecord, toProjectRun, toRestQuestion, worktreeView, fileSizeOf, readFileContent } from '@app/runner';
import { applyTaskWrite, stopRunRouted } from '../tasks/scaleout-hooks';
import { checkServableFile, runInfoFile, taskRunsDir, RUN_OUTPUT_FILE, TASK_PROMPT_FILE } from '@app/storage';
import { badRequest, conflict, notFound } from '../common/api-error';
import { formatTime } from '../common/go-format';
import { checkId, checkRunId } from '../common/ids';
import { MAX_TAIL_LINES, parseCountQuery } from '../common/query-numbers';
import { AuditLogService } from '../security/audit-log.service';
import { refuseBrowser } from '../security/browser-origin';
import { confine } from '../security/path-confinement';
import { FileStreamService, RunDiscovery, RunStreamsService } from '@app/streams';
import { PlannerBridge } from '../tasks/planner-bridge';
import { paginate, paginateMapped } from './pagination';
import { removeFolder } from './project-files';
import { isDir, ProjectDataService, TaskSummary } from './project-data.service';
import { SSE_OPTIONS } from '../sse/slow-clients';

/** #18: usage of the task's runs, rate-limit reset, pause and budget state (omitted when empty). */
function usageFields(v: TaskUsageView): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (v.usage) out.usage = v.usage;
  if (v.resume_at) out.resume_at = v.resume_at;
  if (v.paused) out.paused = v.paused;
  if (v.budget_exceeded) out.budget_exceeded = v.budget_exceeded;
  return out;
}

function includeFiles(text: string | undefined): boolean {
  return !['0', 'false', 'no', 'off'].includes((text ?? '').trim().toLowerCase());
}

@Controller('api/projects/:p/tasks')
export class ProjectTasksController {
  constructor(
    private readonly data: ProjectDataService,
    private readonly audit: AuditLogService,
    private readonly streams: RunStreamsService,
    private readonly files: FileStreamService,
    private readonly discovery: RunDiscovery,
    private readonly planner: PlannerBridge,
    private readonly runner: RunnerService,
  ) {}

  private ids(p: string, t: string) {
    return { projectId: checkId(p, 'project_id'), taskId: checkId(t, 'task_id') };
  }

  private findRun(p: string, t: string, r: string): RunRecord {
    const { projectId, taskId } = this.ids(p, t);
    const runId = checkRunId(r);
    const run = this.data.runs(projectId, taskId).find((x) => x.runId === runId);
    if (!run) throw notFound('run not found');
    return run;
  }

  /** #32 */
  @Get()
  async list(@Param('p') p: string, @Query('limit') limit?: string, @Query('offset') offset?: string, @Query('status') status?: string) {
    const projectId = checkId(p, 'project_id');
    const runs = await this.data.sharedRuns(projectId);
    const byTask = this.data.runsByTask(runs);
    const summary = (t: string) => this.data.task(projectId, t, byTask.get(t) ?? []);
    const newestFirst = (a: { taskId: string; createdAt: Date }, b: { taskId: string; createdAt: Date }) =>
      b.createdAt.getTime() - a.createdAt.getTime() || (a.taskId < b.taskId ? 1 : -1);
    const ids = this.data.taskIds(projectId, runs);
    // the one status-filter table (libs/runner/src/status/task-summary.ts); an unknown name filters nothing
    const filter = taskStatusFilter(status ?? '');
    if (filter) return paginate(ids.map(summary).filter((t) => filter(t)).sort(newestFirst).map((t) => this.listItem(t)), limit, offset);
    // no status filter: order by creation time alone, summarise only the tasks on the page
    const keys = ids.map((taskId) => ({ taskId, createdAt: this.data.createdAt(projectId, taskId, byTask.get(taskId) ?? []) })).sort(newestFirst);
    return paginateMapped(keys, limit, offset, (k) => this.listItem(summary(k.taskId)));
  }

  private listItem(t: TaskSummary) {
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

  /** #33 */
  @Get(':t')
  detail(@Param('p') p: string, @Param('t') t: string, @Query('include_files') files?: string) {
    const { projectId, taskId } = this.ids(p, t);
    const runs = this.data.runs(projectId, taskId);
    if (runs.length === 0 && !this.data.taskExists(projectId, taskId)) throw notFound('task not found');
    const s = this.data.task(projectId, taskId, runs);
    const withFiles = includeFiles(files);
    return {
      id: taskId,
      project_id: projectId,
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
      worktree: worktreeView(this.data.taskDir(projectId, taskId)),
      criteria: taskCriteriaView(this.data.taskDir(projectId, taskId), runs),
      ...usageFields(s.usage),
      runs: runs.map((r) => toProjectRun(r, withFiles)),
    };
  }

  /** #34 (browser-blocked) */
  @Delete(':t')
  @HttpCode(204)
  async remove(@Param('p') p: string, @Param('t') t: string, @Req() req: FastifyRequest) {
    const { projectId, taskId } = this.ids(p, t);
    const runs = this.data.runs(projectId, taskId);
    refuseBrowser(req, 'task deletion');
    if (runs.some((r) => r.info.status === 'running')) throw conflict('task has running runs', { status: 'running' });
    const dir = this.data.taskDir(projectId, taskId);
    if (!isDir(dir)) throw notFound('task not found');
    removeFolder(this.data, dir, 'task path');
    await this.planner.dropTask(projectId, taskId);
    this.audit.record(req, { endpoint: 'DELETE /api/projects/{project_id}/tasks/{task_id}', project_id: projectId, task_id: taskId });
  }

  /** #35 */
  @Post(':t/resume')
  @HttpCode(200)
  async resume(@Param('p') p: string, @Param('t') t: string, @Req() req: FastifyRequest) {
    const { projectId, taskId } = this.ids(p, t);
    const dir = this.data.taskDir(projectId, taskId);
    if (!isDir(dir)) throw notFound('task not found');
    const { reopened } = await applyTaskWrite(this.data, { op: 'resume', projectId, taskId });
    if (!reopened) throw badRequest('task has no DONE file; nothing to resume');
    this.audit.record(req, { endpoint: 'POST /api/projects/{project_id}/tasks/{task_id}/resume', project_id: projectId, task_id: taskId });
    return { project_id: projectId, task_id: taskId, resumed: true };
  }

  /** #36 */
  @Get(':t/file')
  taskFile(@Param('p') p: string, @Param('t') t: string, @Query('name') name?: string) {
    const { projectId, taskId } = this.ids(p, t);
    const fileName = name ?? TASK_PROMPT_FILE;
    if (fileName !== TASK_PROMPT_FILE) throw notFound(`unknown task file: ${fileName}`);
    const file = confine(this.data.root, path.join(this.data.taskDir(projectId, taskId), TASK_PROMPT_FILE), 'task file path');
    const content = readFileContent(this.data.root, file, TASK_PROMPT_FILE);
    if (!content) throw notFound('TASK.md not found');
    return content;
  }

  /** #40 */
  @Get(':t/runs')
  runs(@Param('p') p: string, @Param('t') t: string, @Query('limit') limit?: string, @Query('offset') offset?: string, @Query('include_files') files?: string) {
    const { projectId, taskId } = this.ids(p, t);
    const runs = this.data.runs(projectId, taskId);
    if (runs.length === 0) throw notFound('task not found');
    const withFiles = includeFiles(files);
    return paginate([...runs].reverse().map((r) => toProjectRun(r, withFiles)), limit, offset);
  }

  /** #41: the task's runs (and runs started later) as one SSE stream, with run_start/run_end (D12). */
  @Sse(':t/runs/stream', SSE_OPTIONS)
  runsStream(@Param('p') p: string, @Param('t') t: string, @SseSignal() signal: AbortSignal, @Headers('last-event-id') lastEventId?: string): Observable<MessageEvent> {
    const { projectId, taskId } = this.ids(p, t);
    const refs = this.discovery.listTask(projectId, taskId);
    if (refs.length === 0) throw notFound('project or task not found');
    const runsDir = taskRunsDir(this.data.taskDir(projectId, taskId));
    return this.streams.fanIn(refs, (r) => r.projectId === projectId && r.taskId === taskId, lastEventId, true, runsDir, signal);
  }

  /** #42 */
  @Get(':t/runs/:r')
  run(@Param('p') p: string, @Param('t') t: string, @Param('r') r: string) {
    return toProjectRun(this.findRun(p, t, r), true);
  }

  /** #43 (browser-blocked after the lookup) */
  @Delete(':t/runs/:r')
  @HttpCode(204)
  removeRun(@Param('p') p: string, @Param('t') t: string, @Param('r') r: string, @Req() req: FastifyRequest) {
    const run = this.findRun(p, t, r);
    refuseBrowser(req, 'run deletion');
    if (run.info.status === 'running') throw conflict('run is still running', { status: run.info.status });
    if (!isDir(this.data.taskDir(run.projectId, run.taskId))) throw notFound('task directory not found');
    removeFolder(this.data, run.dir, 'run path');
    this.audit.record(req, { endpoint: 'DELETE /api/projects/{project_id}/tasks/{task_id}/runs/{run_id}', project_id: run.projectId, task_id: run.taskId, run_id: run.runId, payload: { status: run.info.status } });
  }

  /** #44 */
  @Post(':t/runs/:r/stop')
  @HttpCode(202)
  stop(@Param('p') p: string, @Param('t') t: string, @Param('r') r: string, @Req() req: FastifyRequest) {
    const run = this.findRun(p, t, r);
    if (run.info.status !== 'running') throw conflict('run is not running', { status: run.info.status });
    if (run.info.process_ownership === 'external') throw conflict('run is externally owned and cannot be stopped by conductor', { run_id: run.runId });
    void stopRunRouted(this.data.scaleout, this.runner, run, { graceMs: this.data.stopGraceMs, stoppedBy: 'api' }).catch((err) => new Logger('api').warn(`stop run ${run.runId}: ${(err as Error).message}`));
    this.audit.record(req, { endpoint: 'POST /api/projects/{project_id}/tasks/{task_id}/runs/{run_id}/stop', project_id: run.projectId, task_id: run.taskId, run_id: run.runId, payload: { pgid: run.info.pgid } });
    return { run_id: run.runId, message: 'SIGTERM sent' };
  }

  private runFile(run: RunRecord, name: string | undefined): { name: string; file: string } {
    const n = name?.trim() || 'stdout';
    if (!RUN_FILE_NAMES.includes(n)) throw notFound(`unknown file: ${n}`);
    const file = runFilePath(run, n);
    if (!file) throw notFound(`file path not set for ${n}`);
    const confined = confine(this.data.root, file, 'run file path');
    checkServableFile(this.data.root, confined, 'run file path');
    return { name: n, file: confined };
  }

  /** #45 (`tail=N` returns the last N lines, D12; `tail=0` the whole file) */
  @Get(':t/runs/:r/file')
  file(@Param('p') p: string, @Param('t') t: string, @Param('r') r: string, @Query('name') name?: string, @Query('tail') tail?: string) {
    const run = this.findRun(p, t, r);
    const { name: n, file } = this.runFile(run, name);
    const tailN = parseCountQuery(tail, 'tail', MAX_TAIL_LINES);
    const content = readFileContent(this.data.root, file, n, tailN);
    if (!content) throw notFound(`file not found: ${n}`);
    return content;
  }

  /** #46 */
  @Sse(':t/runs/:r/stream', SSE_OPTIONS)
  fileStream(
    @Param('p') p: string,
    @Param('t') t: string,
    @Param('r') r: string,
    @SseSignal() signal: AbortSignal,
    @Query('name') name?: string,
    @Headers('last-event-id') lastEventId?: string,
  ): Observable<MessageEvent> {
    const run = this.findRun(p, t, r);
    const { file } = this.runFile(run, name);
    return this.files.stream(file, runInfoFile(run.dir), signal, lastEventId);
  }
}

