export * from './aggregate';
export * from './budget';
export * from './markers';
export * from './task-settings';
export * from './run-telemetry';
export { usageHooks, DEFAULT_HOLD_POLL_MS, type UsageHooks, type UsageHold, type UsageLoopOptions } from './loop-hooks';
export * from './task-view';
export * from './job-budget';
export * from './usage-page';
