import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { TaskStarter, TaskStartRequest, TaskStartResult } from '@app/triggers';
import { ProjectDataService } from '../projects/project-data.service';
import { TasksService } from '../tasks/tasks.service';
import { CreateTaskDto } from '../tasks/dto/create-task.dto';

/** Task states in which a schedule's previous task counts as still going (concurrency policy). */
const ACTIVE = new Set(['running', 'partial_failure', 'queued', 'needs_input', 'blocked']);

/** Schedules and triggers start tasks through POST /api/v1/tasks' own use case (TasksService.create). */
@Injectable()
export class ApiTaskStarter implements TaskStarter {
  constructor(
    private readonly tasks: TasksService,
    private readonly data: ProjectDataService,
  ) {}

  async start(req: TaskStartRequest): Promise<TaskStartResult> {
    const body = Object.assign(new CreateTaskDto(), {
      project_id: req.project_id,
      task_id: req.task_id,
      agent_type: req.agent_type || this.defaultAgent(),
      prompt: req.prompt,
      project_root: req.project_root,
      isolation: req.isolation,
      base: req.base,
    });
    const res = await this.tasks.create(body, this.requestFor(req));
    return { project_id: res.project_id, task_id: res.task_id, run_id: res.run_id, status: res.status };
  }

  isActive(projectId: string, taskId: string): boolean {
    if (!this.data.taskExists(projectId, taskId)) return false;
    return ACTIVE.has(this.data.task(projectId, taskId).v1Status);
  }

  async stop(projectId: string, taskId: string): Promise<void> {
    await this.tasks.cancel(taskId, projectId, this.requestFor({ source: 'schedule replace' }));
  }

  private defaultAgent(): string {
    return this.tasks.defaultAgent();
  }

  /** The audit log records the HTTP request when there is one, else the schedule that started it. */
  private requestFor(req: Pick<TaskStartRequest, 'source' | 'httpRequest'>): FastifyRequest {
    if (req.httpRequest) return req.httpRequest as FastifyRequest;
    return { method: 'POST', url: `/(${req.source})`, headers: { 'x-request-id': req.source }, ip: '' } as unknown as FastifyRequest;
  }
}
