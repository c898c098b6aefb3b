import { DynamicModule, Module, ModuleMetadata } from '@nestjs/common';
import { PLANNER_OPTIONS, PlannerOptions, PlannerService } from './planner.service';

export interface PlannerModuleAsyncOptions {
  imports?: ModuleMetadata['imports'];
  inject?: any[];
  useFactory: (...deps: any[]) => PlannerOptions;
}

/**
 * Provides PlannerService. The TASK_LAUNCHER token must be resolvable from here: pass the module
 * that exports it in `imports` (or make that module global).
 */
@Module({})
export class PlannerModule {
  static forRoot(options: PlannerOptions, imports: ModuleMetadata['imports'] = []): DynamicModule {
    return {
      module: PlannerModule,
      imports,
      providers: [{ provide: PLANNER_OPTIONS, useValue: options }, PlannerService],
      exports: [PlannerService],
    };
  }

  /** e.g. `{ inject: [API_CONTEXT], useFactory: (ctx) => plannerOptionsFrom(ctx) }` */
  static forRootAsync(opts: PlannerModuleAsyncOptions): DynamicModule {
    return {
      module: PlannerModule,
      imports: opts.imports ?? [],
      providers: [{ provide: PLANNER_OPTIONS, inject: opts.inject ?? [], useFactory: opts.useFactory }, PlannerService],
      exports: [PlannerService],
    };
  }
}

/** Planner options from what the server was started with (defaults.max_concurrent_root_tasks). */
export function plannerOptionsFrom(ctx: { root: string; config?: { defaults?: { max_concurrent_root_tasks?: number } }; disableTaskStart?: boolean }): PlannerOptions {
  return {
    root: ctx.root,
    limit: Math.max(0, Number(ctx.config?.defaults?.max_concurrent_root_tasks ?? 0) || 0),
    taskStartEnabled: !ctx.disableTaskStart,
  };
}
