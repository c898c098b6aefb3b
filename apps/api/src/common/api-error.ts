/** The error codes of the standard envelope (api.md §8.1). */
export type ApiErrorCode =
  | 'BAD_REQUEST'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNPROCESSABLE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'TOO_MANY_REQUESTS'
  | 'NOT_IMPLEMENTED'
  | 'BAD_GATEWAY'
  | 'INSUFFICIENT_STORAGE'
  | 'INTERNAL';

const STATUS: Record<ApiErrorCode, number> = {
  BAD_REQUEST: 400,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNPROCESSABLE: 422,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TOO_MANY_REQUESTS: 429,
  NOT_IMPLEMENTED: 501,
  BAD_GATEWAY: 502,
  INSUFFICIENT_STORAGE: 507,
  INTERNAL: 500,
};

/** Every code of the envelope (the OpenAPI document's Error schema lists them). */
export const API_ERROR_CODES = Object.keys(STATUS) as ApiErrorCode[];

/** An HTTP-level failure raised by the API layer; the exception filter renders it as the envelope. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly details?: Record<string, string>,
  ) {
    super(message);
    this.status = STATUS[code];
  }
}

export function codeForStatus(status: number): ApiErrorCode {
  const found = (Object.keys(STATUS) as ApiErrorCode[]).find((c) => STATUS[c] === status);
  return found ?? (status >= 500 ? 'INTERNAL' : 'BAD_REQUEST');
}

export const badRequest = (msg: string, details?: Record<string, string>) => new ApiError('BAD_REQUEST', msg, details);
export const notFound = (msg: string, details?: Record<string, string>) => new ApiError('NOT_FOUND', msg, details);
export const conflict = (msg: string, details?: Record<string, string>) => new ApiError('CONFLICT', msg, details);
/** Well-formed, but the server cannot act on it (e.g. the agent's CLI is not installed). */
export const unprocessable = (msg: string, details?: Record<string, string>) => new ApiError('UNPROCESSABLE', msg, details);
export const forbidden = (msg: string) => new ApiError('FORBIDDEN', msg);
export const internal = (msg: string) => new ApiError('INTERNAL', msg);

export function envelope(code: string, message: string, details?: Record<string, string>) {
  return { error: details ? { code, message, details } : { code, message } };
}
