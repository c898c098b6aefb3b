import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isNoSpace, NO_SPACE_MESSAGE, StorageError, StorageErrorCode } from '@app/storage';
import { BusError } from '@app/messagebus';
import { RunnerError, RunnerErrorCode } from '@app/runner';
import { WorktreeError, type WorktreeErrorCode } from '@app/worktree';
import { ApiError, ApiErrorCode, codeForStatus, envelope } from './api-error';
import type { RouteTable } from './route-table';

type BusErrorCode = BusError['code'];

function storageCode(code: StorageErrorCode): ApiErrorCode {
  switch (code) {
    case 'INVALID_ID':
    case 'INVALID_CONFIG':
      return 'BAD_REQUEST';
    case 'NOT_FOUND':
      return 'NOT_FOUND';
    case 'CONFLICT':
    case 'STALE_EPOCH': // the task was claimed by a newer owner
    case 'CLAIM_BLOCKED':
    case 'CORRUPT': // a write to a record that cannot be parsed: the state conflicts, the file stays
      return 'CONFLICT';
    case 'NOT_REGULAR_FILE':
      return 'FORBIDDEN';
    case 'NO_SPACE':
      return 'INSUFFICIENT_STORAGE';
    case 'LOCK_TIMEOUT':
    case 'IO':
      return 'INTERNAL';
    default: {
      const never: never = code;
      return never;
    }
  }
}

function busCode(code: BusErrorCode): ApiErrorCode {
  switch (code) {
    case 'INVALID_MESSAGE':
      return 'BAD_REQUEST';
    case 'SINCE_NOT_FOUND':
      return 'NOT_FOUND';
    case 'TOO_LARGE':
      return 'PAYLOAD_TOO_LARGE';
    case 'NO_SPACE':
      return 'INSUFFICIENT_STORAGE';
    case 'NOT_REGULAR_FILE': // a FIFO, device, folder or symlink in place of the bus: that bus's problem (issue #29)
    case 'SYMLINK':
      return 'FORBIDDEN';
    case 'LOCK_TIMEOUT':
    case 'IO':
      return 'INTERNAL';
    default: {
      const never: never = code;
      return never;
    }
  }
}

function runnerCode(code: RunnerErrorCode): ApiErrorCode {
  switch (code) {
    case 'INVALID_INPUT':
      return 'BAD_REQUEST';
    case 'NOT_FOUND':
      return 'NOT_FOUND';
    case 'DEPENDENCY_CYCLE':
    case 'NOT_RUNNING':
    case 'EXTERNAL_RUN':
    case 'DEPTH_LIMIT':
    case 'FANOUT_LIMIT':
    case 'TASK_LOCKED':
      return 'CONFLICT';
    case 'FATAL_AGENT':
    case 'AGENT_FAILED':
    case 'MAX_RESTARTS':
    case 'STOPPED':
    case 'STOP_TIMEOUT':
    case 'IO':
      return 'INTERNAL';
    default: {
      const never: never = code;
      return never;
    }
  }
}

function worktreeCode(code: WorktreeErrorCode): ApiErrorCode {
  switch (code) {
    case 'INVALID_INPUT':
      return 'BAD_REQUEST';
    case 'NOT_FOUND':
      return 'NOT_FOUND';
    case 'MERGE_CONFLICT':
    case 'MERGE_FAILED':
      return 'CONFLICT';
    case 'WORKTREE':
    case 'IO':
      return 'INTERNAL';
    default: {
      const never: never = code;
      return never;
    }
  }
}

const INTERNAL_MESSAGES: Partial<Record<string, string>> = {};

/** Bus errors answered with a fixed line (no server paths), as the file routes answer theirs. */
const BUS_MESSAGES: Partial<Record<BusErrorCode, string>> = {
  SINCE_NOT_FOUND: 'message id not found',
  NOT_REGULAR_FILE: 'message bus path: not a regular file',
  SYMLINK: 'message bus path: a symlink',
};

/** Renders a thrown value as [status, envelope body]; 500s carry a short phrase, the cause is logged. */
export function toEnvelope(err: unknown, logger?: Logger, methodNotAllowed?: (err: unknown) => boolean): { status: number; body: ReturnType<typeof envelope> } {
  let code: ApiErrorCode;
  let message: string;
  let details: Record<string, string> | undefined;
  const fst = fastifyCode(err);
  if (fst === 'FST_ERR_CTP_BODY_TOO_LARGE') return { status: 413, body: envelope('PAYLOAD_TOO_LARGE', 'request body too large (limit: config api.max_request_body_bytes, default 1 MiB)') };
  if (fst === 'FST_ERR_CTP_EMPTY_JSON_BODY') return { status: 400, body: envelope('BAD_REQUEST', 'request body is required') };
  if (fst === 'FST_ERR_CTP_INVALID_JSON_BODY') return { status: 400, body: envelope('BAD_REQUEST', 'invalid json: body is not a valid JSON value') };
  // a full disk is the same 507 whichever layer met it (storage, bus, runner or a raw fs call)
  if (!(err instanceof ApiError) && isNoSpace(err)) return { status: 507, body: envelope('INSUFFICIENT_STORAGE', NO_SPACE_MESSAGE) };
  if (err instanceof ApiError) {
    return { status: err.status, body: envelope(err.code, err.message, err.details) };
  } else if (err instanceof StorageError) {
    code = storageCode(err.code);
    message = err.message;
  } else if (err instanceof BusError) {
    code = busCode(err.code);
    message = BUS_MESSAGES[err.code] ?? err.message;
  } else if (err instanceof RunnerError) {
    code = runnerCode(err.code);
    message = err.message;
  } else if (err instanceof WorktreeError) {
    code = worktreeCode(err.code);
    message = err.message;
  } else if (err instanceof HttpException) {
    const status = err.getStatus();
    const response = err.getResponse() as any;
    const raw = typeof response === 'object' && response ? response.message : response;
    message = Array.isArray(raw) ? raw.join('; ') : String(raw ?? err.message);
    if (status === 404 && /^Cannot /.test(message)) {
      if (methodNotAllowed?.(err)) return { status: 405, body: envelope('METHOD_NOT_ALLOWED', 'method not allowed') };
      message = 'not found';
    }
    // Fastify's body-parser errors reach the filter re-wrapped by Nest, with only their text left.
    if (status === 413) message = 'request body too large (limit: config api.max_request_body_bytes, default 1 MiB)';
    if (/^Body cannot be empty/.test(message)) message = 'request body is required';
    if (/^Body is not valid JSON/.test(message)) message = 'invalid json: body is not a valid JSON value';
    return { status, body: envelope(codeForStatus(status), message) };
  } else if (isFastifyError(err)) {
    const status = err.statusCode;
    return { status, body: envelope(codeForStatus(status), err.message) };
  } else {
    code = 'INTERNAL';
    message = 'internal error';
  }
  if (code === 'INTERNAL') {
    logger?.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    message = INTERNAL_MESSAGES[message] ?? message;
  }
  const status = new ApiError(code, message).status;
  return { status, body: envelope(code, message, details) };
}

/** The FST_* code of a Fastify error, also when Nest wrapped it (as `cause` or the response). */
function fastifyCode(err: unknown): string | undefined {
  const e = err as { cause?: unknown; options?: { cause?: unknown } };
  for (const candidate of [err, e?.cause, e?.options?.cause, err instanceof HttpException ? err.getResponse() : undefined]) {
    const code = (candidate as { code?: unknown })?.code;
    if (typeof code === 'string' && code.startsWith('FST_')) return code;
  }
  return undefined;
}

function isFastifyError(err: unknown): err is Error & { statusCode: number; code?: string } {
  const e = err as { statusCode?: unknown };
  return err instanceof Error && typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 600;
}

/** The one exception filter: every error becomes `{"error":{"code","message","details"?}}` (api.md §8.1). */
@Catch()
export class ErrorEnvelopeFilter implements ExceptionFilter {
  private readonly logger = new Logger('api');

  constructor(private readonly routes?: RouteTable) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const req = host.switchToHttp().getRequest<FastifyRequest>();
    const path = (req.raw.url ?? req.url).split('?')[0];
    const { status, body } = toEnvelope(exception, this.logger, () => !!this.routes?.otherMethodMatches(req.method, path));
    if (reply.sent || reply.raw.headersSent) {
      reply.raw.end();
      return;
    }
    if (status === 405 && UNWRAPPED_PATHS.has(path)) {
      void reply.status(405).header('Content-Type', 'text/plain; charset=utf-8').send('method not allowed\n');
      return;
    }
    void reply.status(status).header('Content-Type', 'application/json').send(body);
  }
}

/** Routes upstream serves outside its JSON wrapper: a wrong method gets plain text (api.md #1, #2). */
const UNWRAPPED_PATHS = new Set(['/healthz', '/metrics']);
