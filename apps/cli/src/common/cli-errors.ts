import { UsageError } from '@app/boot';

/** Exit codes of both executables: 0 ok, 1 failure, 2 usage error (any bad input). */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** A wrong or missing flag or argument: printed as one line, exit code 2 (one class for the CLI and the libs doing its work). */
export { UsageError };

/**
 * Lib error codes that mean "the input is wrong" (a bad id, flag value or message), whichever lib
 * or command raised them: the same class as a usage error, so the same exit code everywhere.
 */
const INVALID_INPUT_CODES = new Set(['INVALID_ID', 'INVALID_INPUT', 'INVALID_MESSAGE', 'TOO_LARGE', 'INVALID_CONFIG']);

/**
 * Lib error codes for a name the user gave that does not exist (unknown project, task, run, agent,
 * config file, bus message id): bad input too, exit 2 (the API answers 404 for the same codes).
 */
const UNKNOWN_NAME_CODES = new Set(['NOT_FOUND', 'UNKNOWN_AGENT', 'SINCE_NOT_FOUND']);

/** A request refused by a configured limit (fan-out governor, issue #33): exit 2, the API answers 409. */
const LIMIT_CODES = new Set(['DEPTH_LIMIT', 'FANOUT_LIMIT']);

const codeOf = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && typeof code === 'string' ? code : undefined;
};

/** The one mapping of errors to exit codes (commands throw; they never pick an exit code themselves). */
export function exitCodeFor(err: unknown): number {
  if (err instanceof UsageError) return EXIT_USAGE;
  const code = codeOf(err);
  return code !== undefined && (INVALID_INPUT_CODES.has(code) || UNKNOWN_NAME_CODES.has(code) || LIMIT_CODES.has(code)) ? EXIT_USAGE : EXIT_FAILURE;
}

/**
 * The `code` of an error as `--json` prints it: the lib's own code (NOT_FOUND, INVALID_INPUT,
 * TASK_LOCKED, …), USAGE for a usage error, FAILED for anything untyped.
 */
export function errorCodeFor(err: unknown): string {
  if (err instanceof UsageError) return 'USAGE';
  return codeOf(err) ?? 'FAILED';
}

let jsonErrors = false;

/** Errors are printed as JSON from now on (the command that runs was given --json). */
export function setJsonErrors(on: boolean): void {
  jsonErrors = on;
}

/**
 * The error line on stderr: `Error: <message>` (upstream's cobra style), or under --json one line
 * `{"error":{"code":…,"message":…}}` (the API's error envelope). Stdout keeps only results.
 */
export function errorLine(code: string, message: string, json = jsonErrors): string {
  return json ? `${JSON.stringify({ error: { code, message } })}\n` : `Error: ${message}\n`;
}

/**
 * Lib errors that are a usage error as the CLI reports them (code USAGE under --json): the
 * runner's and the worktree lib's INVALID_INPUT and a bad id from any lib. Applied here once, for both roots.
 */
const INPUT_ERROR_NAMES = new Set(['RunnerError', 'WorktreeError']);

function asUsageError(err: unknown): unknown {
  // by name: importing @app/runner here would load the runner (and NestJS, unbundled) on every fast command
  const runnerInput = err instanceof Error && INPUT_ERROR_NAMES.has(err.name) && codeOf(err) === 'INVALID_INPUT';
  if (runnerInput || codeOf(err) === 'INVALID_ID') return new UsageError((err as Error).message);
  return err;
}

/**
 * Prints one error line on stderr and sets the exit code: the one error mapping of the CLI, for the
 * fast path (fast-path.ts, fast/run-hot.ts) and nest-commander (its serviceErrorHandler in nest-cli.ts).
 * Commands just throw.
 */
export function reportError(thrown: unknown): void {
  const { line, exitCode } = errorReport(thrown);
  process.stderr.write(line);
  process.exitCode = exitCode;
}

/** What reportError prints and the exit code it sets (the task supervisor sends both to its client). */
export function errorReport(thrown: unknown, json = jsonErrors): { line: string; exitCode: number } {
  const err = asUsageError(thrown);
  const message = err instanceof Error ? err.message : String(err);
  return { line: errorLine(errorCodeFor(err), message, json), exitCode: exitCodeFor(err) };
}
