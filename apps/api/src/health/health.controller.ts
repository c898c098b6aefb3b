import { Controller, Get, HttpCode, Inject, Post } from '@nestjs/common';
import { API_CONTEXT, ApiContext } from '../common/api-context';
import { ApiError } from '../common/api-error';
import { formatTime, goDurationSeconds } from '../common/go-format';
import { ProjectDataService } from '../projects/project-data.service';

/** #1, #3, #4, #5 and the self-update stubs #6/#7. */
@Controller()
export class HealthController {
  constructor(
    @Inject(API_CONTEXT) private readonly ctx: ApiContext,
    private readonly data: ProjectDataService,
  ) {}

  private uptimeSeconds(): number {
    return (Date.now() - this.ctx.startedAt) / 1000;
  }

  @Get('healthz')
  healthz() {
    return { status: 'ok', uptime: goDurationSeconds(this.uptimeSeconds()) };
  }

  @Get('api/v1/health')
  health() {
    return { status: 'ok' };
  }

  @Get('api/v1/version')
  version() {
    return { version: this.ctx.version };
  }

  @Get('api/v1/status')
  status() {
    const running = this.data.allRuns().filter((r) => r.info.status === 'running');
    running.sort((a, b) => a.info.start_time.getTime() - b.info.start_time.getTime());
    return {
      active_runs_count: running.length,
      uptime_seconds: this.uptimeSeconds(),
      configured_agents: Object.keys(this.ctx.config?.agents ?? {}).sort(),
      version: this.ctx.version,
      // extra-root runs are counted above but, as upstream, not listed
      running_tasks: running.filter((r) => this.ctx.layout.contains(r.dir)).map((r) => ({ project_id: r.projectId, task_id: r.taskId, run_id: r.runId, agent: r.info.agent, started: formatTime(r.info.start_time) })),
    };
  }

  /** Self-update is not implemented in this server (documented): both methods answer 501. */
  @Get('api/v1/admin/self-update')
  selfUpdateStatus(): never {
    throw new ApiError('NOT_IMPLEMENTED', 'self-update is not supported by this server');
  }

  @Post('api/v1/admin/self-update')
  @HttpCode(202)
  selfUpdate(): never {
    throw new ApiError('NOT_IMPLEMENTED', 'self-update is not supported by this server');
  }
}
