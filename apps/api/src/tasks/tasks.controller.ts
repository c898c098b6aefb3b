import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { taskCriteriaView, toRunV1 } from '@app/runner';
import { formatTime } from '../common/go-format';
import { SelfUpdateService } from '../admin/self-update.service';
import { checkId, isTaskKey } from '../common/ids';
import { ProjectDataService } from '../projects/project-data.service';
import { cursorPage, pageQuery } from '../projects/pagination';
import { CreateTaskDto } from './dto/create-task.dto';
import { TasksService } from './tasks.service';
import { worktreeView } from './worktree.controller';

/** #9–#12 */
@Controller('api/v1/tasks')
export class TasksController {
  constructor(
    private readonly tasks: TasksService,
    private readonly data: ProjectDataService,
    private readonly selfUpdate: SelfUpdateService,
  ) {}

  private v1(projectId: string, taskId: string) {
    const s = this.data.task(projectId, taskId);
    return {
      summary: s,
      body: {
        project_id: projectId,
        task_id: taskId,
        status: s.v1Status,
        queue_position: s.queuePosition,
        last_activity: formatTime(s.lastActivity),
        depends_on: s.dependsOn.length ? s.dependsOn : undefined,
        blocked_by: s.blockedBy.length ? s.blockedBy : undefined,
        corrupt_reason: s.corruptReason,
      },
    };
  }

  /** #9: tasks with a TASK.md, by project then task; `project_id` narrows to one project (upstream ignores it). */
  @Get()
  list(@Query('limit') limit?: string, @Query('after') after?: string, @Query('project_id') projectId?: string) {
    const q = pageQuery(limit, after, isTaskKey);
    const projects = projectId === undefined ? this.data.projectIds() : [checkId(projectId, 'project_id')];
    const keys: { p: string; t: string; key: string }[] = [];
    for (const p of projects) {
      for (const t of this.data.taskIds(p)) {
        if (this.data.hasTaskPrompt(p, t)) keys.push({ p, t, key: `${p}/${t}` });
      }
    }
    // bounded (issue #29): one page in `<project>/<task>` order, next_cursor → after=; only the page is built
    keys.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const { page, ...more } = cursorPage(keys, (k) => k.key, q);
    return { tasks: page.map((k) => this.v1(k.p, k.t).body), ...more };
  }

  /** #10 */
  @Post()
  create(@Body() body: CreateTaskDto, @Req() req: FastifyRequest) {
    this.selfUpdate.assertTaskCreationAllowed();
    return this.tasks.create(body, req);
  }

  /** #11 */
  @Get(':id')
  get(@Param('id') id: string, @Query('project_id') projectId?: string) {
    const loc = this.tasks.locate(checkId(id, 'task_id'), projectId);
    const { summary, body } = this.v1(loc.projectId, loc.taskId);
    const runs = [...summary.runs].sort((a, b) => (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
    const taskDir = this.data.taskDir(loc.projectId, loc.taskId);
    return { ...body, worktree: worktreeView(taskDir), criteria: taskCriteriaView(taskDir, runs), runs: runs.length ? runs.map(toRunV1) : undefined };
  }

  /** #12: cancel (DONE + stop of its running runs, D6). */
  @Delete(':id')
  @HttpCode(202)
  cancel(@Param('id') id: string, @Query('project_id') projectId: string | undefined, @Req() req: FastifyRequest) {
    return this.tasks.cancel(id, projectId, req);
  }
}
