import { DynamicModule, Module } from '@nestjs/common';
import { AdminModule } from './admin/admin.module';
import { ApiContext } from './common/api-context';
import { CoreModule } from './common/core.module';
import { HealthController } from './health/health.controller';
import { MessagesController } from './messages/messages.controller';
import { MessagesService } from './messages/messages.service';
import { ProjectMessagesController } from './messages/project-messages.controller';
import { McpController } from './mcp/mcp.controller';
import { McpSessions } from './mcp/mcp-sessions.service';
import { MetricsModule } from './metrics/metrics.module';
import { NeedsInputController } from './needs-input/needs-input.controller';
import { NeedsInputService } from './needs-input/needs-input.service';
import { PlannerModule, plannerOptionsFrom } from './planner/planner.module';
import { ProjectDataService } from './projects/project-data.service';
import { ProjectTasksController } from './projects/project-tasks.controller';
import { ProjectsController } from './projects/projects.controller';
import { RunsController } from './runs/runs.controller';
import { BusHub } from './sse/bus-hub';
import { FileStreamService } from './sse/file-stream.service';
import { RunDiscovery } from './sse/run-discovery.service';
import { RunLogHub } from './sse/run-log-hub';
import { RunStreamsService } from './sse/run-streams.service';
import { LauncherModule } from './tasks/launcher.module';
import { PlannerBridge } from './tasks/planner-bridge';
import { TasksController } from './tasks/tasks.controller';
import { WorktreeController } from './tasks/worktree.controller';
import { TasksService } from './tasks/tasks.service';
import { UsageController } from './usage/usage.controller';
import { WebhookModule } from './webhook/webhook.module';

export interface ApiModuleOptions {
  defaultMetrics?: boolean;
}

/** Composition root of the server. */
@Module({})
export class ApiModule {
  static forRoot(ctx: ApiContext, opts: ApiModuleOptions = {}): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        CoreModule.forRoot(ctx),
        MetricsModule.forRoot({ defaultMetrics: opts.defaultMetrics }),
        LauncherModule,
        PlannerModule.forRoot(plannerOptionsFrom(ctx), [LauncherModule]),
        WebhookModule.forRoot(ctx.config),
        AdminModule,
      ],
      controllers: [HealthController, ProjectsController, ProjectTasksController, ProjectMessagesController, MessagesController, RunsController, TasksController, NeedsInputController, McpController, WorktreeController, UsageController],
      providers: [
        PlannerBridge,
        ProjectDataService,
        MessagesService,
        NeedsInputService,
        TasksService,
        RunLogHub,
        RunDiscovery,
        RunStreamsService,
        BusHub,
        FileStreamService,
        McpSessions,
      ],
    };
  }
}
