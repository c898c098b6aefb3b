import { Controller, Logger, Get, Headers, Header, HttpCode, MessageEvent, Param, Post, Query, Req, Sse, SseSignal } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';
import { readRawText, RunnerService, type RunRecord, toRunV1 } from '@app/runner';
import { stopRunRouted } from '../tasks/scaleout-hooks';
import { ApiError, conflict, notFound } from '../common/api-error';
import { checkRunId, isRunId } from '../common/ids';
import { ProjectDataService } from '../projects/project-data.service';
import { cursorPage, pageQuery } from '../projects/pagination';
import { AuditLogService } from '../security/audit-log.service';
import { RunDiscovery, RunStreamsService } from '@app/streams';
import { isZeroTime } from '../common/go-format';
import { runInfoFile } from '@app/storage';
import { SSE_OPTIONS } from '../sse/slow-clients';

/** #8, #13–#17 */
@Controller('api/v1/runs')
export class RunsController {
  constructor(
    private readonly data: ProjectDataService,
    private readonly audit: AuditLogService,
    private readonly streams: RunStreamsService,
    private readonly discovery: RunDiscovery,
    private readonly runner: RunnerService,
  ) {}

  private find(r: string): RunRecord {
    const run = this.data.findRun(checkRunId(r));
    if (!run) throw notFound('run not found');
    return run;
  }

  /** #13 */
  @Get()
  list(@Query('limit') limit?: string, @Query('after') after?: string) {
    const q = pageQuery(limit, after, isRunId);
    const runs = this.data.allRuns().sort((a, b) => (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
    // bounded (issue #29): one page in run-id order, next_cursor → after=
    const { page, ...more } = cursorPage(runs, (r) => r.runId, q);
    return { runs: page.map(toRunV1), ...more };
  }

  /** #8: every run under the root, runs created later included. */
  @Sse('stream/all', SSE_OPTIONS)
  streamAll(@SseSignal() signal: AbortSignal, @Headers('last-event-id') lastEventId?: string): Observable<MessageEvent> {
    return this.streams.fanIn(this.discovery.listAll(), () => true, lastEventId, false, undefined, signal);
  }

  /** #14 */
  @Get(':r')
  get(@Param('r') r: string) {
    return toRunV1(this.find(r));
  }

  /** #15 */
  @Get(':r/info')
  @Header('Content-Type', 'application/x-yaml')
  info(@Param('r') r: string): string {
    const text = readRawText(runInfoFile(this.find(r).dir));
    if (text === undefined) throw notFound('run not found');
    return text;
  }

  /** #16 */
  @Post(':r/stop')
  @HttpCode(202)
  stop(@Param('r') r: string, @Req() req: FastifyRequest) {
    const run = this.find(r);
    if (run.info.status !== 'running' || !isZeroTime(run.info.end_time)) throw conflict('run already finished');
    if (run.info.process_ownership === 'external') throw conflict('run is externally owned and cannot be stopped by conductor', { run_id: run.runId });
    void stopRunRouted(this.data.scaleout, this.runner, run, { graceMs: this.data.stopGraceMs, stoppedBy: 'api' }).catch((err) => new Logger('api').warn(`stop run ${run.runId}: ${(err as Error).message}`));
    this.audit.record(req, { endpoint: 'POST /api/v1/runs/{run_id}/stop', project_id: run.projectId, task_id: run.taskId, run_id: run.runId, payload: { pgid: run.info.pgid } });
    return { status: 'stopping' };
  }

  /** #17 (429 past the per-run client limit) */
  @Sse(':r/stream', SSE_OPTIONS)
  stream(@Param('r') r: string, @SseSignal() signal: AbortSignal, @Headers('last-event-id') lastEventId?: string): Observable<MessageEvent> {
    const run = this.find(r);
    const stream = this.streams.singleRun({ runId: run.runId, projectId: run.projectId, taskId: run.taskId, runDir: run.dir }, lastEventId, signal);
    if (!stream) throw new ApiError('TOO_MANY_REQUESTS', 'max clients reached for run');
    return stream;
  }
}
