import type { FastifyRequest } from 'fastify';
import { generateTaskId } from '@app/storage';
import type { SubTaskRequest, SubTaskStarted, SubTaskStarter } from '@app/mcp';
import type { ApiContext } from '../common/api-context';
import type { TasksService } from '../tasks/tasks.service';

/**
 * `task_start` over HTTP: exactly POST /api/v1/tasks (same validation, planner, audit record),
 * with the MCP session's opening request standing for the caller.
 */
export class ApiTaskStarter implements SubTaskStarter {
  constructor(
    private readonly ctx: ApiContext,
    private readonly tasks: TasksService,
    private readonly req: FastifyRequest,
  ) {}

  async start(r: SubTaskRequest): Promise<SubTaskStarted> {
    const res = await this.tasks.create(
      {
        project_id: r.projectId,
        task_id: r.taskId ?? generateTaskId(),
        agent_type: r.agent ?? this.ctx.config?.defaults?.agent ?? '',
        prompt: r.prompt,
        project_root: r.cwd,
      },
      this.req,
    );
    return { project_id: res.project_id, task_id: res.task_id, run_id: res.run_id, status: res.status };
  }

  // The server's loops are seen through their files (run-infos and DONE).
  isActive(): boolean {
    return false;
  }

  failure(): string | undefined {
    return undefined;
  }
}
