import { Controller, Get, Inject } from '@nestjs/common';
import { API_CONTEXT, ApiContext } from '../common/api-context';
import { formatTime, goDurationSeconds } from '../common/go-format';
import { ProjectDataService } from '../projects/project-data.service';

/** #1, #3, #4, #5 (self-update #6/#7 lives in admin/). */
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
    const defaultAgent = this.ctx.config?.defaults?.agent?.trim();
    return {
      active_runs_count: running.length,
      uptime_seconds: this.uptimeSeconds(),
      configured_agents: Object.keys(this.ctx.config?.agents ?? {}).sort(),
      // config defaults.agent: the agent a task gets when none is named (the dashboard preselects it)
      ...(defaultAgent ? { default_agent: defaultAgent } : {}),
      version: this.ctx.version,
      // the dashboard offers "Open pull request" only then (docs/triggers.md)
      pull_requests: !!this.ctx.config?.forge?.github?.token,
      // extra-root runs are counted above but, as upstream, not listed
      running_tasks: running.filter((r) => this.ctx.layout.contains(r.dir)).map((r) => ({ project_id: r.projectId, task_id: r.taskId, run_id: r.runId, agent: r.info.agent, started: formatTime(r.info.start_time) })),
    };
  }
}
