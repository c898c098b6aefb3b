export * from './planner.module';
export * from './planner.service';
export * from './planner-state';
export * from './task-launcher';
