export type AgentErrorCode =
  | 'UNKNOWN_AGENT'
  | 'BINARY_NOT_FOUND'
  | 'NOT_EXECUTABLE'
  | 'UNSUPPORTED'
  | 'INVALID_CONFIG'
  | 'AUTH'
  | 'QUOTA'
  | 'HTTP'
  | 'STREAM'
  | 'RATE_LIMITED';

/**
 * Error raised by the agent layer. `code` lets the runner tell errors that no restart can fix
 * (see {@link isFatalAgentError}) from transient ones.
 */
export class AgentError extends Error {
  constructor(
    readonly code: AgentErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AgentError';
  }
}

/** Codes that a restart cannot fix (D1): a missing or unusable binary, an unknown type, bad configuration or credentials. */
const FATAL_CODES: ReadonlySet<AgentErrorCode> = new Set<AgentErrorCode>([
  'UNKNOWN_AGENT',
  'BINARY_NOT_FOUND',
  'NOT_EXECUTABLE',
  'UNSUPPORTED',
  'INVALID_CONFIG',
  'AUTH',
  'QUOTA',
]);

export function isFatalAgentError(err: unknown): boolean {
  return err instanceof AgentError && FATAL_CODES.has(err.code);
}

/** The provider refused the request until `resumeAt` (HTTP 429): the loop waits, the attempt is not counted. */
export class RateLimitedError extends AgentError {
  constructor(
    readonly resumeAt: Date,
    message: string,
  ) {
    super('RATE_LIMITED', message);
    this.name = 'RateLimitedError';
  }
}
