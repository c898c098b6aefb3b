import { DynamicModule, Module, ModuleMetadata, Provider } from '@nestjs/common';
import { AGENT_EXECUTOR, createAgentExecutor, RUNNER_OPTIONS, RunnerModuleOptions, TASK_DISPATCHER } from './runner.providers';
import { RunnerService } from './runner.service';

export interface RunnerModuleAsyncOptions {
  imports?: ModuleMetadata['imports'];
  inject?: any[];
  useFactory: (...deps: any[]) => RunnerModuleOptions;
}

function providers(options: Provider): Provider[] {
  return [
    options,
    { provide: AGENT_EXECUTOR, useFactory: createAgentExecutor },
    RunnerService,
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
