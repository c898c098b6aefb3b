/** Error codes of the worktree lib; the CLI maps them to exit codes, the API to HTTP statuses (as the runner's). */
export type WorktreeErrorCode =
  | 'INVALID_INPUT' // a bad ref, path or script argument
  | 'NOT_FOUND' // no such worktree, repository or commit
  | 'WORKTREE' // a git worktree operation failed
  | 'MERGE_CONFLICT' // the task branch does not merge cleanly into its base branch
  | 'MERGE_FAILED' // the verify command failed, or the base branch cannot be advanced
  | 'IO';

export class WorktreeError extends Error {
  override readonly name = 'WorktreeError';
  constructor(
    readonly code: WorktreeErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export function isWorktreeError(err: unknown, code?: WorktreeErrorCode): err is WorktreeError {
  return err instanceof WorktreeError && (code === undefined || err.code === code);
}
