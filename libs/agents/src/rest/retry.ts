import { AgentError, RateLimitedError } from '../agents.errors';
import { DEFAULT_RATE_LIMIT_WAIT_MS } from '../parsers/telemetry';

/** Delays before the 1st, 2nd and 3rd retry of a transient failure. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [1000, 2000, 4000];
export const DEFAULT_HEADER_TIMEOUT_MS = 60_000;
const MAX_RETRY_AFTER_MS = 60_000;
/** The longest rate-limit wait a Retry-After can ask for (the loop waits it out with its slot released). */
export const MAX_RATE_LIMIT_WAIT_MS = 24 * 3600_000;
const ERROR_BODY_LIMIT = 16 * 1024;

const QUOTA_BODY = /insufficient[_\s-]?quota|exceeded your current quota|used all available credits|credit balance is too low|spending limit/i;

export type HttpFailureKind = 'auth' | 'quota' | 'transient' | 'permanent';

export function classifyHttpFailure(status: number, body: string): HttpFailureKind {
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return QUOTA_BODY.test(body) ? 'quota' : 'transient';
  if (status === 408 || status >= 500) return 'transient';
  return 'permanent';
}

export interface RetryOptions {
  /** Delay before each retry; its length is the number of retries (default 1 s, 2 s, 4 s). */
  retryDelaysMs?: readonly number[];
  /** Waits between attempts (injectable so tests need not wait). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Time allowed until response headers arrive. */
  headerTimeoutMs?: number;
}

export interface PostRequest {
  /** `perplexity` or `xai`: prefixes log lines and messages. */
  label: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  signal?: AbortSignal;
  /** Receives one line per retry (written to the run's stderr file). */
  log: (line: string) => void;
  /** Text of a non-2xx failure, e.g. `perplexity api error: status 500: <body>`. */
  formatStatusError: (status: number, body: string) => string;
}

/** A successful response plus the controller that aborts its body (used for the idle timeout). */
export interface OpenResponse {
  response: Response;
  controller: AbortController;
}

/**
 * POSTs with retries on transport errors, 408, 429 without Retry-After and 5xx; fails at once on
 * 401/403 (AUTH), on 429 whose body says the quota is exhausted (QUOTA), on 429 with a
 * Retry-After (RATE_LIMITED: the run ends and the loop waits until then with its slot released)
 * and on other statuses (HTTP). A 429 still refused after the last retry is RATE_LIMITED with the
 * default wait. Only the request is retried: errors while streaming the body are the caller's.
 */
export async function postWithRetry(req: PostRequest, opts: RetryOptions = {}): Promise<OpenResponse> {
  const delays = opts.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  const sleep = opts.sleep ?? abortableSleep;
  for (let attempt = 0; ; attempt++) {
    const retriesLeft = attempt < delays.length;
    let failure: { status?: number; error?: unknown; retryAfterMs?: number };
    const controller = new AbortController();
    try {
      const response = await fetchWithHeaderTimeout(req, controller, opts.headerTimeoutMs ?? DEFAULT_HEADER_TIMEOUT_MS);
      if (response.ok) return { response, controller };
      const body = await readLimited(response, ERROR_BODY_LIMIT);
      const kind = classifyHttpFailure(response.status, body);
      const message = req.formatStatusError(response.status, body);
      if (kind === 'auth') throw new AgentError('AUTH', message);
      if (kind === 'quota') throw new AgentError('QUOTA', message);
      if (response.status === 429) throwIfRateLimited(response.headers.get('retry-after'), message, retriesLeft);
      if (kind === 'permanent' || !retriesLeft) throw new AgentError('HTTP', message);
      failure = { status: response.status, retryAfterMs: parseRetryAfter(response.headers.get('retry-after')) };
    } catch (err) {
      if (err instanceof AgentError) throw err;
      if (req.signal?.aborted) throw canceledError(req.label, req.signal, err);
      if (!retriesLeft) throw new AgentError('HTTP', `${req.label} send request: ${describeError(err)}`, { cause: err });
      failure = { error: err };
    }
    const delay = failure.retryAfterMs ?? delays[attempt];
    const reason = failure.status !== undefined ? `status ${failure.status}` : `error: ${describeError(failure.error)}`;
    req.log(`${req.label} retry in ${formatDelay(delay)} after ${reason}\n`);
    await sleep(delay, req.signal);
    if (req.signal?.aborted) throw canceledError(req.label, req.signal);
  }
}

async function fetchWithHeaderTimeout(req: PostRequest, controller: AbortController, headerTimeoutMs: number): Promise<Response> {
  // The combined signal also aborts the body stream later (caller cancel or idle timeout).
  const signal = req.signal ? AbortSignal.any([req.signal, controller.signal]) : controller.signal;
  const timer = setTimeout(() => controller.abort(new Error(`no response headers within ${formatDelay(headerTimeoutMs)}`)), headerTimeoutMs);
  try {
    return await fetch(req.url, { method: 'POST', headers: req.headers, body: req.body, signal });
  } catch (err) {
    // fetch reports an abort with the reason it was given; that reason is the useful text.
    throw controller.signal.aborted && controller.signal.reason instanceof Error ? controller.signal.reason : err;
  } finally {
    clearTimeout(timer);
  }
}

async function readLimited(response: Response, limit: number): Promise<string> {
  try {
    const text = await response.text();
    return text.slice(0, limit).trim();
  } catch {
    return '';
  }
}

function throwIfRateLimited(retryAfter: string | null, message: string, retriesLeft: boolean): void {
  const now = Date.now();
  let until = rateLimitResetAt(retryAfter, now);
  if (!until && !retriesLeft) until = new Date(now + DEFAULT_RATE_LIMIT_WAIT_MS);
  if (until) throw new RateLimitedError(until, `${message}; rate limited until ${until.toISOString()}`);
}

/** The reset time of a 429's Retry-After (integer seconds or an HTTP date), at most a day ahead; undefined when absent or not ahead. */
export function rateLimitResetAt(value: string | null, now = Date.now()): Date | undefined {
  const ms = retryAfterMs(value, now);
  return ms === undefined ? undefined : new Date(now + Math.min(ms, MAX_RATE_LIMIT_WAIT_MS));
}

function retryAfterMs(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  let ms: number;
  if (/^\d+$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return ms > 0 ? ms : undefined;
}

/** Retry-After as integer seconds or an HTTP date; capped so a hostile server cannot park a run. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  const ms = retryAfterMs(value, now);
  return ms === undefined ? undefined : Math.min(ms, MAX_RETRY_AFTER_MS);
}

export function formatDelay(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  return `${ms / 1000}s`;
}

export function describeError(err: unknown): string {
  // Duck-typed: errors thrown by fetch may come from another realm (e.g. under jest).
  const message = (e: unknown) => (typeof e === 'object' && e !== null && typeof (e as Error).message === 'string' ? (e as Error).message : undefined);
  const text = message(err);
  if (text === undefined) return String(err);
  const cause = message((err as { cause?: unknown }).cause);
  return cause && !text.includes(cause) ? `${text}: ${cause}` : text;
}

/** `<label> request canceled: <reason>` — the reason tells a deadline from a stop. */
export function canceledError(label: string, signal: AbortSignal, cause?: unknown): AgentError {
  const reason = signal.reason === undefined ? '' : `: ${describeError(signal.reason)}`;
  return new AgentError('HTTP', `${label} request canceled${reason}`, { cause: cause ?? signal.reason });
}

export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
