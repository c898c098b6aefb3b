import { Module } from '@nestjs/common';
import { LocalTaskLauncher, TASK_LAUNCHER } from './task-launcher';

/** Provides TASK_LAUNCHER (the planner imports this module to launch queued tasks). */
@Module({
  providers: [LocalTaskLauncher, { provide: TASK_LAUNCHER, useExisting: LocalTaskLauncher }],
  exports: [TASK_LAUNCHER, LocalTaskLauncher],
})
export class LauncherModule {}
