/** Exit codes of both executables: 0 ok, 1 failure, 2 usage error. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** A wrong or missing flag or argument: printed as one line, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function exitCodeFor(err: unknown): number {
  return err instanceof UsageError ? EXIT_USAGE : EXIT_FAILURE;
}

/** One line on stderr: `Error: <message>` (upstream's cobra style). */
export function reportError(err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`Error: ${message}\n`);
  process.exitCode = exitCodeFor(err);
}
