import { DynamicModule, Module, ModuleMetadata, Provider } from '@nestjs/common';
import { AGENT_EXECUTOR, createAgentExecutor, RUNNER_OPTIONS, RunnerModuleOptions, TASK_DISPATCHER } from './runner.providers';
import { AGENT_REGISTRY, type AgentRegistry } from '@app/agents';
import { MessageBusService } from '@app/messagebus';
import { LIVENESS_PROBE, type LivenessProbe, STORAGE_INDEX_FACTORY, type StorageIndexFactory } from '@app/storage';
import type { AgentExecutor } from './agent-executor';
import { WEBHOOK_SENDER } from '@app/webhook';
import { createRunnerService } from './runner-service.providers';
import { RunnerService } from './runner.service';
import type { WebhookSender } from '@app/webhook';

// RunnerService is a plain class: its parts come from these tokens (LIVENESS_PROBE and STORAGE_INDEX_FACTORY required: StorageModule of the same app)
const REQUIRED: unknown[] = [LIVENESS_PROBE, MessageBusService, STORAGE_INDEX_FACTORY];
const RUNNER_SERVICE_INJECT = [AGENT_EXECUTOR, AGENT_REGISTRY, LIVENESS_PROBE, RUNNER_OPTIONS, WEBHOOK_SENDER, MessageBusService, STORAGE_INDEX_FACTORY].map((token) => ({
  token,
  optional: !REQUIRED.includes(token),
}));

export interface RunnerModuleAsyncOptions {
  imports?: ModuleMetadata['imports'];
  inject?: any[];
  useFactory: (...deps: any[]) => RunnerModuleOptions;
}

function providers(options: Provider): Provider[] {
  return [
    options,
    { provide: AGENT_EXECUTOR, useFactory: createAgentExecutor },
    {
      provide: RunnerService,
      inject: RUNNER_SERVICE_INJECT,
      useFactory: (
        executor: AgentExecutor | undefined,
        registry: AgentRegistry | undefined,
        probe: LivenessProbe,
        options: RunnerModuleOptions | undefined,
        webhookSender: WebhookSender | undefined,
        bus: MessageBusService,
        indexFor: StorageIndexFactory,
      ) => createRunnerService({ executor, registry, probe, writers: bus.systemWriters, indexFor, webhookSender }, options),
    },
    { provide: TASK_DISPATCHER, inject: [RunnerService], useFactory: (runner: RunnerService) => runner.dispatcher },
  ];
}

const exportsList = [RunnerService, AGENT_EXECUTOR, TASK_DISPATCHER, RUNNER_OPTIONS];

/**
 * The engine for an app: RunnerService (runs/stops jobs and tasks), the AgentExecutor seam and
 * the TaskDispatcher. Needs AGENT_REGISTRY (AgentsModule) and LIVENESS_PROBE (StorageModule)
 * from the same app; nothing in it is HTTP- or CLI-specific.
 */
@Module({})
export class RunnerModule {
  static forRoot(options: RunnerModuleOptions = {}): DynamicModule {
    return { module: RunnerModule, global: true, providers: providers({ provide: RUNNER_OPTIONS, useValue: options }), exports: exportsList };
  }

  static forRootAsync(opts: RunnerModuleAsyncOptions): DynamicModule {
    return {
      module: RunnerModule,
      global: true,
      imports: opts.imports ?? [],
      providers: providers({ provide: RUNNER_OPTIONS, inject: opts.inject ?? [], useFactory: opts.useFactory }),
      exports: exportsList,
    };
  }
}
