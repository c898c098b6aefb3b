/** Exit codes of both executables: 0 ok, 1 failure, 2 usage error. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** A wrong or missing flag or argument: printed as one line, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * Lib error codes that mean "the input is wrong" (a bad id, flag value or message), whichever lib
 * or command raised them: the same class as a usage error, so the same exit code everywhere.
 */
const INVALID_INPUT_CODES = new Set(['INVALID_ID', 'INVALID_INPUT', 'INVALID_MESSAGE', 'TOO_LARGE', 'INVALID_CONFIG']);

export function exitCodeFor(err: unknown): number {
  if (err instanceof UsageError) return EXIT_USAGE;
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && typeof code === 'string' && INVALID_INPUT_CODES.has(code) ? EXIT_USAGE : EXIT_FAILURE;
}

/** One line on stderr: `Error: <message>` (upstream's cobra style). */
export function reportError(err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`Error: ${message}\n`);
  process.exitCode = exitCodeFor(err);
}
