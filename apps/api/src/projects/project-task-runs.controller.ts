import { Controller, Delete, Get, Headers, HttpCode, Logger, MessageEvent, Param, Post, Query, Req, Sse, SseSignal } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';
import { includeFilesQuery, readFileContent, RUN_FILE_NAMES, runFilePath, RunnerService, type RunRecord, toProjectRun } from '@app/runner';
import { checkServableFile, runInfoFile, taskRunsDir } from '@app/storage';
import { FileStreamService, RunDiscovery, RunStreamsService } from '@app/streams';
import { conflict, notFound } from '../common/api-error';
import { checkId, checkRunId } from '../common/ids';
import { MAX_TAIL_LINES, parseCountQuery } from '../common/query-numbers';
import { AuditLogService } from '../security/audit-log.service';
import { refuseBrowser } from '../security/browser-origin';
import { confine } from '../security/path-confinement';
import { SSE_OPTIONS } from '../sse/slow-clients';
import { stopRunRouted } from '../tasks/scaleout-hooks';
import { paginate } from './pagination';
import { removeFolder } from './project-files';
import { isDir, ProjectDataService } from './project-data.service';

/** The run routes of a project's task (#40–#46). */
@Controller('api/projects/:p/tasks/:t/runs')
export class ProjectTaskRunsController {
  constructor(
    private readonly data: ProjectDataService,
    private readonly audit: AuditLogService,
    private readonly streams: RunStreamsService,
    private readonly files: FileStreamService,
    private readonly discovery: RunDiscovery,
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

  /** #40 */
  @Get()
  runs(@Param('p') p: string, @Param('t') t: string, @Query('limit') limit?: string, @Query('offset') offset?: string, @Query('include_files') files?: string) {
    const { projectId, taskId } = this.ids(p, t);
    const runs = this.data.runs(projectId, taskId);
    if (runs.length === 0) throw notFound('task not found');
    const withFiles = includeFilesQuery(files);
    return paginate([...runs].reverse().map((r) => toProjectRun(r, withFiles)), limit, offset);
  }

  /** #41: the task's runs (and runs started later) as one SSE stream, with run_start/run_end (D12). */
  @Sse('stream', SSE_OPTIONS)
  runsStream(@Param('p') p: string, @Param('t') t: string, @SseSignal() signal: AbortSignal, @Headers('last-event-id') lastEventId?: string): Observable<MessageEvent> {
    const { projectId, taskId } = this.ids(p, t);
    const refs = this.discovery.listTask(projectId, taskId);
    if (refs.length === 0) throw notFound('project or task not found');
    const runsDir = taskRunsDir(this.data.taskDir(projectId, taskId));
    return this.streams.fanIn(refs, (r) => r.projectId === projectId && r.taskId === taskId, lastEventId, true, runsDir, signal);
  }

  /** #42 */
  @Get(':r')
  run(@Param('p') p: string, @Param('t') t: string, @Param('r') r: string) {
    return toProjectRun(this.findRun(p, t, r), true);
  }

  /** #43 (browser-blocked after the lookup) */
  @Delete(':r')
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
  @Post(':r/stop')
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
  @Get(':r/file')
  file(@Param('p') p: string, @Param('t') t: string, @Param('r') r: string, @Query('name') name?: string, @Query('tail') tail?: string) {
    const run = this.findRun(p, t, r);
    const { name: n, file } = this.runFile(run, name);
    const tailN = parseCountQuery(tail, 'tail', MAX_TAIL_LINES);
    const content = readFileContent(this.data.root, file, n, tailN);
    if (!content) throw notFound(`file not found: ${n}`);
    return content;
  }

  /** #46 */
  @Sse(':r/stream', SSE_OPTIONS)
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
