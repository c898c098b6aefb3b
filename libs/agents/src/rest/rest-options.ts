import { RetryOptions } from './retry';

export const DEFAULT_IDLE_STREAM_TIMEOUT_MS = 60_000;

/** Knobs of the REST backends; defaults suit production, tests shrink them. */
export interface RestBackendOptions extends RetryOptions {
  /** Fail when the stream delivers nothing for this long. */
  idleTimeoutMs?: number;
}
