import { Controller, Delete, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import * as path from 'node:path';
import { includeFilesQuery, readFileContent, taskDetailView, taskListItem, taskStatusFilter } from '@app/runner';
import { TASK_PROMPT_FILE } from '@app/storage';
import { badRequest, conflict, notFound } from '../common/api-error';
import { checkId } from '../common/ids';
import { AuditLogService } from '../security/audit-log.service';
import { refuseBrowser } from '../security/browser-origin';
import { confine } from '../security/path-confinement';
import { applyTaskWrite } from '../tasks/scaleout-hooks';
import { PlannerBridge } from '../tasks/planner-bridge';
import { paginate, paginateMapped } from './pagination';
import { removeFolder } from './project-files';
import { isDir, ProjectDataService } from './project-data.service';

/** The task routes of a project (the run routes are ProjectTaskRunsController's). */
@Controller('api/projects/:p/tasks')
export class ProjectTasksController {
  constructor(
    private readonly data: ProjectDataService,
    private readonly audit: AuditLogService,
    private readonly planner: PlannerBridge,
  ) {}

  private ids(p: string, t: string) {
    return { projectId: checkId(p, 'project_id'), taskId: checkId(t, 'task_id') };
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
    if (filter) return paginate(ids.map(summary).filter((t) => filter(t)).sort(newestFirst).map((t) => taskListItem(t)), limit, offset);
    // no status filter: order by creation time alone, summarise only the tasks on the page
    const keys = ids.map((taskId) => ({ taskId, createdAt: this.data.createdAt(projectId, taskId, byTask.get(taskId) ?? []) })).sort(newestFirst);
    return paginateMapped(keys, limit, offset, (k) => taskListItem(summary(k.taskId)));
  }

  /** #33 */
  @Get(':t')
  detail(@Param('p') p: string, @Param('t') t: string, @Query('include_files') files?: string) {
    const { projectId, taskId } = this.ids(p, t);
    const runs = this.data.runs(projectId, taskId);
    if (runs.length === 0 && !this.data.taskExists(projectId, taskId)) throw notFound('task not found');
    return taskDetailView(this.data.task(projectId, taskId, runs), this.data.taskDir(projectId, taskId), includeFilesQuery(files));
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
}
