import { Module } from '@nestjs/common';
import { TaskLoopEvents } from './task-loop-events';
import { LocalTaskLauncher, TASK_LAUNCHER } from './task-launcher';

/** Provides TASK_LAUNCHER (the planner imports this module to launch queued tasks) and the loops' events. */
@Module({
  providers: [LocalTaskLauncher, TaskLoopEvents, { provide: TASK_LAUNCHER, useExisting: LocalTaskLauncher }],
  exports: [TASK_LAUNCHER, LocalTaskLauncher, TaskLoopEvents],
})
export class LauncherModule {}
