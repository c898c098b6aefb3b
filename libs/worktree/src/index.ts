export { checkRefArg, git, gitRaw, isGitMissing, repoRoot, resolveCommit } from './git';
export { ensureTaskWorktree, removeTaskWorktree, worktreePath, taskBranch, worktreeEnv, normalizePaths, WORKTREES_DIR, BRANCH_PREFIX, type WorktreeRequest, type EnsureWorktreeOptions, type ResolvedWorktreeBase, resolveWorktreeBase, resolveBase } from './create';
export { readWorktreeRecord, WORKTREE_RECORD_FILE, type WorktreeRecord, type MergeStatus } from './record';
export { taskDiff, parsePatch, type TaskDiff } from './diff';
export { mergeTask, type MergeOptions, type MergeResult } from './merge';
export { pushTaskBranch, type PushResult } from './push-branch';
export { commitTaskLeftovers } from './leftovers';
export { pathsOverlap, overlappingSiblings } from './overlap';
export { reservePort, releasePort } from './port';
export { gcWorktrees, type WorktreeGcOptions, type WorktreeGcReport, type WorktreeGcEntry } from './gc';
export {
  checkTaskWorktree,
  prepareTaskWorktree,
  prepareJobWorktree,
  configIsolation,
  registeredRepos,
  type IsolationRequest,
  type PreparedWorktree,
  type WorktreeFields,
} from './task-worktree';
export { readMergeQueue, taskQueueEntry, mergeQueuePath, MERGE_QUEUE_FILE, type MergeQueueEntry, type MergeQueueState, type MergeOutcome } from './merge-queue';
export { resumeMergeQueues, type ResumeReport } from './merge-run';
export {
  REPO_SCRIPT_FILES,
  approvalsFile,
  approveCommand,
  assertApproved,
  isApproved,
  readApprovals,
  recordApprovals,
  scriptInTree,
  scriptsAtCommit,
  type ApprovalEntry,
  type RepoScript,
  type RepoScriptKind,
} from './setup-approval';
export { WorktreeError, isWorktreeError, type WorktreeErrorCode } from './worktree.errors';
