/**
 * A wrong or missing flag or argument of a CLI command: printed as one line, exit code 2
 * (apps/cli/src/common/cli-errors.ts maps it). Here so the libs that hold a command's work (the
 * REST client of `conductor …`, the monitor loop) can word bad input the same way the commands do.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
