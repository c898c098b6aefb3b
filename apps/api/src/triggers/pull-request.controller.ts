import { Body, Controller, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { GithubPullRequests } from '@app/triggers';
import { ApiError, notFound } from '../common/api-error';
import { checkId } from '../common/ids';
import { ProjectDataService } from '../projects/project-data.service';
import { AuditLogService } from '../security/audit-log.service';
import { TasksService } from '../tasks/tasks.service';
import { PullRequestDto } from './dto/pull-request.dto';
import { toApiError } from './trigger-errors';

/**
 * The merge's pull-request mode (docs/triggers.md, "Pull requests"): push a worktree task's branch
 * and open or update its pull request on GitHub (200 with what was done; 502 when git or GitHub
 * refused), and read what is recorded. Under both task route families.
 */
@Controller()
export class PullRequestController {
  constructor(
    private readonly pulls: GithubPullRequests,
    private readonly tasks: TasksService,
    private readonly data: ProjectDataService,
    private readonly audit: AuditLogService,
  ) {}

  private async open(projectId: string, taskId: string, body: PullRequestDto, req: FastifyRequest, endpoint: string) {
    this.data.taskDir(projectId, taskId); // 404 for a task that does not exist
    this.audit.record(req, { endpoint, project_id: projectId, task_id: taskId });
    let res;
    try {
      res = await this.pulls.openForTask(projectId, taskId, body ?? {});
    } catch (err) {
      throw toApiError(err);
    }
    if (res.outcome === 'failed') throw new ApiError('BAD_GATEWAY', `pull request not opened or updated: ${res.error}`);
    return { project_id: projectId, task_id: taskId, ...res };
  }

  private show(projectId: string, taskId: string) {
    this.data.taskDir(projectId, taskId);
    const rec = this.pulls.recorded(projectId, taskId);
    if (!rec) throw notFound('the task has no pull request');
    return { project_id: projectId, task_id: taskId, ...rec };
  }

  @Post('api/v1/tasks/:id/pull-request')
  @HttpCode(200)
  v1Open(@Param('id') id: string, @Body() body: PullRequestDto, @Req() req: FastifyRequest, @Query('project_id') projectId?: string) {
    const loc = this.tasks.locate(id, projectId);
    return this.open(loc.projectId, loc.taskId, body, req, 'POST /api/v1/tasks/{task_id}/pull-request');
  }

  @Get('api/v1/tasks/:id/pull-request')
  v1Show(@Param('id') id: string, @Query('project_id') projectId?: string) {
    const loc = this.tasks.locate(id, projectId);
    return this.show(loc.projectId, loc.taskId);
  }

  @Post('api/projects/:p/tasks/:t/pull-request')
  @HttpCode(200)
  projectOpen(@Param('p') p: string, @Param('t') t: string, @Body() body: PullRequestDto, @Req() req: FastifyRequest) {
    return this.open(checkId(p, 'project_id'), checkId(t, 'task_id'), body, req, 'POST /api/projects/{project_id}/tasks/{task_id}/pull-request');
  }

  @Get('api/projects/:p/tasks/:t/pull-request')
  projectShow(@Param('p') p: string, @Param('t') t: string) {
    return this.show(checkId(p, 'project_id'), checkId(t, 'task_id'));
  }
}
