export { checkStartTask, seedTaskFiles, startTask, threadParentRef, TaskStartRefused, type CheckedTaskStart, type StartedTask, type TaskStartRequest, type TaskStartStage, type TaskStartWrite } from './start-task';
export { budgetFlags, criteriaFlags, isolationFromFlags, loopSettings, type LoopSettings, type LoopSettingsFlags } from './loop-settings';
