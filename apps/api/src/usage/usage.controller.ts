import { Controller, Get, HttpCode, Inject, Param, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { isUsageCursor, pause, unpause, usagePage, usageReport } from '@app/runner';
import { badRequest, notFound } from '../common/api-error';
import { API_CONTEXT, ApiContext } from '../common/api-context';
import { checkId, checkOptionalId } from '../common/ids';
import { isDir } from '../projects/project-data.service';
import { AuditLogService } from '../security/audit-log.service';
import { pageQuery } from '../projects/pagination';

function sinceOf(text: string | undefined): Date | undefined {
  if (text === undefined || text === '') return undefined;
  const d = /^\d{4}-\d\d-\d\d/.test(text) ? new Date(text) : new Date(NaN);
  if (Number.isNaN(d.getTime())) throw badRequest(`since must be an RFC 3339 time, got "${text}"`);
  return d;
}

/** Usage reports and pause/unpause (#18); the aggregation is the runner's usageReport. */
@Controller('api')
export class UsageController {
  constructor(
    @Inject(API_CONTEXT) private readonly ctx: ApiContext,
    private readonly audit: AuditLogService,
  ) {}

  @Get('v1/usage')
  all(@Query('project_id') p?: string, @Query('task_id') t?: string, @Query('since') since?: string, @Query('limit') limit?: string, @Query('after') after?: string) {
    const q = pageQuery(limit, after, isUsageCursor);
    const projectId = checkOptionalId(p, 'project_id');
    const taskId = checkOptionalId(t, 'task_id');
    if (taskId && !projectId) throw badRequest('task_id requires project_id');
    return usagePage(usageReport({ layout: this.ctx.layout, projectId, taskId, since: sinceOf(since) }), q);
  }

  @Get('projects/:p/usage')
  project(@Param('p') p: string, @Query('since') since?: string, @Query('limit') limit?: string, @Query('after') after?: string) {
    const projectId = checkId(p, 'project_id');
    const q = pageQuery(limit, after, isUsageCursor);
    if (!isDir(this.ctx.layout.projectDir(projectId))) throw notFound('project not found');
    return usagePage(usageReport({ layout: this.ctx.layout, projectId, since: sinceOf(since) }), q);
  }

  @Get('projects/:p/tasks/:t/usage')
  task(@Param('p') p: string, @Param('t') t: string, @Query('since') since?: string, @Query('limit') limit?: string, @Query('after') after?: string) {
    const projectId = checkId(p, 'project_id');
    const taskId = checkId(t, 'task_id');
    const q = pageQuery(limit, after, isUsageCursor);
    if (!isDir(this.ctx.layout.taskDir(projectId, taskId))) throw notFound('task not found');
    return usagePage(usageReport({ layout: this.ctx.layout, projectId, taskId, since: sinceOf(since) }), q);
  }

  @Post('projects/:p/pause')
  @HttpCode(200)
  pauseProject(@Param('p') p: string, @Req() req: FastifyRequest) {
    return this.hold(req, 'pause', checkId(p, 'project_id'));
  }

  @Post('projects/:p/unpause')
  @HttpCode(200)
  unpauseProject(@Param('p') p: string, @Req() req: FastifyRequest) {
    return this.hold(req, 'unpause', checkId(p, 'project_id'));
  }

  @Post('projects/:p/tasks/:t/pause')
  @HttpCode(200)
  pauseTask(@Param('p') p: string, @Param('t') t: string, @Req() req: FastifyRequest) {
    return this.hold(req, 'pause', checkId(p, 'project_id'), checkId(t, 'task_id'));
  }

  @Post('projects/:p/tasks/:t/unpause')
  @HttpCode(200)
  unpauseTask(@Param('p') p: string, @Param('t') t: string, @Req() req: FastifyRequest) {
    return this.hold(req, 'unpause', checkId(p, 'project_id'), checkId(t, 'task_id'));
  }

  private hold(req: FastifyRequest, action: 'pause' | 'unpause', projectId: string, taskId?: string) {
    const target = { layout: this.ctx.layout, projectId, taskId };
    const dir = taskId ? this.ctx.layout.taskDir(projectId, taskId) : this.ctx.layout.projectDir(projectId);
    if (!isDir(dir)) throw notFound(taskId ? 'task not found' : 'project not found');
    const changed = action === 'pause' ? pause(target, 'conductor API') : unpause(target);
    const endpoint = `POST /api/projects/{project_id}${taskId ? '/tasks/{task_id}' : ''}/${action}`;
    this.audit.record(req, { endpoint, project_id: projectId, task_id: taskId, payload: {} });
    return { project_id: projectId, task_id: taskId, paused: action === 'pause', changed };
  }
}
