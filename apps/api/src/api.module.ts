import { DynamicModule, Module } from '@nestjs/common';
import { AdminModule } from './admin/admin.module';
import { AgentsModule } from '@app/agents';
import { MessageBusModule } from '@app/messagebus';
import { PlannerModule, plannerOptionsFrom } from '@app/planner';
import { RunnerModule } from '@app/runner';
import { createReplicaLivenessProbe } from '@app/scaleout';
import { StorageModule } from '@app/storage';
import { WebhookModule } from '@app/webhook';
import { createGithubApi, FORGE_BRANCHES, FORGE_TASKS, GITHUB_API, GithubInboundService, GithubPullRequests, SchedulerService, TASK_STARTER, TriggerService, TriggersModule, triggersOptionsFrom } from '@app/triggers';
import { ApiSettings } from './common/api-context';
import { CoreModule } from './common/core.module';
import { WebhookFailureLog } from './common/webhook-failure-log';
import { HealthController } from './health/health.controller';
import { OpenApiController } from './health/openapi.controller';
import { MessagesController } from './messages/messages.controller';
import { MessagesService } from './messages/messages.service';
import { ProjectMessagesController } from './messages/project-messages.controller';
import { McpController } from './mcp/mcp.controller';
import { McpSessions } from './mcp/mcp-sessions.service';
import { MetricsModule } from './metrics/metrics.module';
import { NeedsInputController } from './needs-input/needs-input.controller';
import { NeedsInputService } from './needs-input/needs-input.service';
import { ProjectDataService } from './projects/project-data.service';
import { ProjectTaskRunsController } from './projects/project-task-runs.controller';
import { ProjectTasksController } from './projects/project-tasks.controller';
import { ProjectsController } from './projects/projects.controller';
import { RunsController } from './runs/runs.controller';
import { streamProviders } from './sse/streams.providers';
import { LauncherModule } from './tasks/launcher.module';
import { PlannerBridge } from './tasks/planner-bridge';
import { TasksController } from './tasks/tasks.controller';
import { WorktreeController } from './tasks/worktree.controller';
import { MergeQueueService } from './tasks/merge-queue.service';
import { TasksService } from './tasks/tasks.service';
import { UsageController } from './usage/usage.controller';
import { ApiTaskStarter } from './triggers/api-task-starter';
import { ApiForgeBranches } from './triggers/api-forge-branches';
import { ApiForgeTasks } from './triggers/api-forge-tasks';
import { ForgeLoopHook } from './triggers/forge-loop-hook';
import { PullRequestController } from './triggers/pull-request.controller';
import { ForgeController } from './triggers/forge.controller';
import { SchedulesController, TriggersController } from './triggers/triggers.controller';

export interface ApiModuleOptions {
  defaultMetrics?: boolean;
}

/**
 * Composition root of the server: the six lib modules (Storage, MessageBus, Agents, Runner,
 * Planner, Webhook) plus the HTTP features. Everything replaceable (LIVENESS_PROBE, CHANGE_FEED,
 * STORAGE_INDEX, AGENT_REGISTRY, AGENT_EXECUTOR, TASK_DISPATCHER) comes from the lib modules.
 */
@Module({})
export class ApiModule {
  static forRoot(ctx: ApiSettings, opts: ApiModuleOptions = {}): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        StorageModule.forRoot({ root: ctx.root, indexProbe: ctx.scaleout ? createReplicaLivenessProbe() : undefined }),
        MessageBusModule.forRoot(busOptionsFrom(ctx.config)),
        AgentsModule.forRoot(),
        // the server's agents outlive it on purpose; the planner adopts them after a restart (issue #11)
        RunnerModule.forRoot({ stopOnShutdown: false }),
        WebhookModule.forRoot(ctx.config),
        CoreModule.forRoot(ctx),
        MetricsModule.forRoot({ defaultMetrics: opts.defaultMetrics }),
        LauncherModule,
        PlannerModule.forRoot(plannerOptionsFrom(ctx), [LauncherModule]),
        AdminModule,
        TriggersModule.forRoot(triggersOptionsFrom(ctx)),
      ],
      controllers: [HealthController, OpenApiController, ProjectsController, ProjectTasksController, ProjectTaskRunsController, ProjectMessagesController, MessagesController, RunsController, TasksController, NeedsInputController, McpController, WorktreeController, UsageController, SchedulesController, TriggersController, ForgeController, PullRequestController],
      providers: [
        PlannerBridge,
        ProjectDataService,
        MessagesService,
        NeedsInputService,
        TasksService,
        ...streamProviders,
        McpSessions,
        WebhookFailureLog,
        MergeQueueService,
        // schedules and HTTP triggers start tasks through TasksService.create (docs/triggers.md)
        ApiTaskStarter,
        { provide: TASK_STARTER, useExisting: ApiTaskStarter },
        SchedulerService,
        TriggerService,
        // GitHub webhooks in, pull requests out (docs/triggers.md)
        { provide: FORGE_TASKS, useClass: ApiForgeTasks },
        GithubInboundService,
        { provide: FORGE_BRANCHES, useClass: ApiForgeBranches },
        { provide: GITHUB_API, useFactory: () => createGithubApi(ctx.config?.forge?.github) ?? null },
        GithubPullRequests,
        ForgeLoopHook,
      ],
    };
  }
}

/** Options of every bus writer the server opens (config storage.max_message_body_bytes). */
function busOptionsFrom(config: ApiSettings['config']): { maxBodyBytes?: number } {
  const max = config?.storage?.max_message_body_bytes;
  return max ? { maxBodyBytes: max } : {};
}
