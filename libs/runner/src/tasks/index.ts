export { checkStartTask, seedTaskFiles, startTask, threadParentRef, TaskStartRefused, type CheckedTaskStart, type StartedTask, type TaskStartRequest, type TaskStartStage } from './start-task';
