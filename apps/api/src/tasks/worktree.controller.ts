import { Controller, Get, HttpCode, Inject, Param, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { worktreeView } from '@app/runner';
import { mergeTask, readWorktreeRecord, taskDiff } from '@app/worktree';
import { API_CONTEXT, ApiContext } from '../common/api-context';
import { notFound } from '../common/api-error';
import { checkId } from '../common/ids';
import { ProjectDataService } from '../projects/project-data.service';
import { AuditLogService } from '../security/audit-log.service';
import { TasksService } from './tasks.service';

export { worktreeView };

/** Diff and merge of worktree tasks, under both task route families. */
@Controller()
export class WorktreeController {
  constructor(
    @Inject(API_CONTEXT) private readonly ctx: ApiContext,
    private readonly tasks: TasksService,
    private readonly data: ProjectDataService,
    private readonly audit: AuditLogService,
  ) {}

  private taskDir(projectId: string, taskId: string): string {
    const dir = this.data.taskDir(projectId, taskId);
    if (!readWorktreeRecord(dir)) throw notFound('task has no worktree');
    return dir;
  }

  private async diff(projectId: string, taskId: string) {
    const dir = this.taskDir(projectId, taskId);
    const d = await taskDiff(dir);
    return { project_id: projectId, ...d, worktree: worktreeView(dir) };
  }

  private async merge(projectId: string, taskId: string, req: FastifyRequest, endpoint: string) {
    const dir = this.taskDir(projectId, taskId);
    this.audit.record(req, { endpoint, project_id: projectId, task_id: taskId });
    const r = await mergeTask({ taskDir: dir, config: this.ctx.config, writers: this.ctx.systemWriters });
    return { project_id: projectId, ...r, worktree: worktreeView(dir) };
  }

  @Get('api/v1/tasks/:id/diff')
  v1Diff(@Param('id') id: string, @Query('project_id') projectId?: string) {
    const loc = this.tasks.locate(id, projectId);
    return this.diff(loc.projectId, loc.taskId);
  }

  /** Enqueues the merge and answers when it is done (200), or 409 MERGE_CONFLICT / MERGE_FAILED with the files. */
  @Post('api/v1/tasks/:id/merge')
  @HttpCode(200)
  v1Merge(@Param('id') id: string, @Req() req: FastifyRequest, @Query('project_id') projectId?: string) {
    const loc = this.tasks.locate(id, projectId);
    return this.merge(loc.projectId, loc.taskId, req, 'POST /api/v1/tasks/{task_id}/merge');
  }

  @Get('api/projects/:p/tasks/:t/diff')
  projectDiff(@Param('p') p: string, @Param('t') t: string) {
    return this.diff(checkId(p, 'project_id'), checkId(t, 'task_id'));
  }

  @Post('api/projects/:p/tasks/:t/merge')
  @HttpCode(200)
  projectMerge(@Param('p') p: string, @Param('t') t: string, @Req() req: FastifyRequest) {
    return this.merge(checkId(p, 'project_id'), checkId(t, 'task_id'), req, 'POST /api/projects/{project_id}/tasks/{task_id}/merge');
  }
}
