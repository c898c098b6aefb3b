export * from './runner.module';
export * from './runner.providers';
export { RunnerService, type RunnerSeams } from './runner.service';
export { createRunnerService } from './runner-service.providers';
export { RunnerError, isRunnerError, type RunnerErrorCode } from './runner.errors';
export { checkAgentName, checkTaskStart, type StartCheck } from './preflight';
export { formatGoDuration, parseDurationFlag } from './go-duration';
export { countFlag, durationFlag, optionalDuration } from './flag-values';
export { buildPrompt, buildPreamble, RESTART_PREFIX, type PromptContext } from './prompt';
export { LocalAgentExecutor, type AgentExecutor, type AgentHandle, type AgentLaunch, type AgentExit } from './agent-executor';
export { selectAgent, resolveSpec } from './agent-resolution';
export { runJob, runSingleJob, DEFAULT_MAX_DELEGATION_DEPTH, type JobOptions, type JobResult, type JobRun } from './job';
export { runTask } from './task';
export { clearPendingChild, writePendingMarker } from './pending-child';
export * from './tasks';
export {
  DEFAULT_MAX_RESTARTS,
  DEFAULT_RESTART_DELAY_MS,
  DEFAULT_CHILD_WAIT_TIMEOUT_MS,
  DEFAULT_CHILD_POLL_MS,
  DEFAULT_DEPENDENCY_POLL_MS,
  type TaskOptions,
  type TaskResult,
} from './task-options';
export {
  stopRun,
  stopTask,
  terminateProcesses,
  signalExitCode,
  signalStopReason,
  readStoppedBy,
  DEFAULT_STOP_GRACE_MS,
  STOPPED_BY_FILE,
  type StopOptions,
  type StopRunResult,
  type StopTaskOptions,
  type StopTaskResult,
  type StoppedRun,
} from './stop';
export { LocalTaskDispatcher, type TaskDispatcher, type DispatchedTask, type TaskRunner } from './task-dispatcher';
export { abandonTurn, acquireRunSlot, pruneIdleQueue, queueDir, slotsDir, takeTurn, type RunSlot, type TurnState } from './run-slots';
export { propagateCompletion, completionKey, PROPAGATION_KIND } from './completion';
export { collectProcessTree, isProcessRunning } from './process-tree';
export { findLiveRootRun, refuseLiveRootRun, refuseOrphanedAgent, type LiveRootRun } from './live-run';
export { findRunningRun } from './run-scan';
export { deleteTaskFolder } from './task-delete';
export * from './needs-input';
export * from './usage';
export { runGc, gcProjects, gcSummary, parseSizeBytes, type GcSettings, type GcReport, type GcDeletedRun } from './gc/gc';
export { runWrapped, checkWorkingDir, renderCommandLine, wrapProject, WRAP_STDIO_NOTICE, type WrapRunOptions, type WrapRunResult } from './wrap/wrap';
export { buildStatusRow, watchTaskStatus, watchedTaskPaths, worktreeCells, type StatusRow, type WatchTaskStatus } from './status/task-rows';
export { buildTaskRow, buildRunRow, filterTaskRows, runsDirOf, type TaskRow, type RunRow } from './status/list-rows';
export { summarizeTask, taskStatusFilter, TASK_STATUS_FILTERS, TASK_STATUS_FILTER_NAMES, type TaskStatusFacts, type TaskStatusSummary, type FilterableTask } from './status/task-summary';
export { buildRunForest, latestRunTree, type RunNode } from './status/run-tree';
export { collectActivity, compactPreview, rfc3339Seconds, utcSecond, DEFAULT_DRIFT_AFTER_MS, type ActivitySignals, type ActivityBusMessage, type LatestRunFacts } from './status/activity';
export { worktreeStatus, type WorktreeStatus } from './status/worktree-status';
export { scanRecords, taskRecordProblems, taskCorruptReason, relativeRecordPath, type RecordProblem, type RecordKind } from './records/records';
export { buildBlock, installBlock, uninstallBlock, installShellAliases, uninstallShellAliases, BLOCK_START, BLOCK_END } from './wrap/shell-setup';
export { writeThreadChild, threadParentMessage, THREAD_LINK_FILE, type ThreadParentRef, type ThreadChildRef } from './thread-link';
export * from './criteria';
export { admitByMemory, readMemAvailable, MEMINFO_PATH_ENV, type MemoryAdmissionOptions } from './governor/memory-admission';
export { admitChild, checkTreeTotal, FANOUT_LOCK_FILE, type AdmitChildOptions, type Admitted, type QueuedChild } from './governor/fanout-limit';
export { countTreeRuns, treeOf, appendTreeRun, startTreeLedger, treeRunDirs, childQueueBase, pruneChildQueues, TREE_LEDGER_FILE, type TreeRef } from './governor/fanout-tree';
export { holdRun, runnerHolds, RUNNER_LOCK_FILE } from './run-holder';
export { findActiveChildren } from './child-wait';
export * from './api-views';
