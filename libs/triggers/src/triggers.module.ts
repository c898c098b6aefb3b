import { DynamicModule, Module } from '@nestjs/common';
import { TRIGGERS_OPTIONS, TriggersOptions } from './triggers.options';

/**
 * Schedules and HTTP triggers (docs/triggers.md). This module provides the options; the app lists
 * SchedulerService and TriggerService among its providers next to its TASK_STARTER (the app's own
 * task-start use case), which is what keeps this lib free of the server.
 */
@Module({})
export class TriggersModule {
  static forRoot(options: TriggersOptions): DynamicModule {
    return {
      module: TriggersModule,
      providers: [{ provide: TRIGGERS_OPTIONS, useValue: options }],
      exports: [TRIGGERS_OPTIONS],
    };
  }
}
