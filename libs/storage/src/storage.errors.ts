/** CORRUPT: a record file exists but cannot be parsed (shown as status `corrupt`, listed by `run-agent doctor`). */
export type StorageErrorCode = 'INVALID_ID' | 'NOT_FOUND' | 'LOCK_TIMEOUT' | 'INVALID_CONFIG' | 'IO' | 'CONFLICT' | 'CORRUPT' | 'NOT_REGULAR_FILE' | 'NO_SPACE' | 'STALE_EPOCH' | 'CLAIM_BLOCKED';

/**
 * A full disk or an exhausted quota: errno ENOSPC / EDQUOT, or a domain error carrying code
 * NO_SPACE, found on `err` or along its `cause` chain.
 */
export function isNoSpace(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 8; e = e.cause as typeof e, depth++) {
    if (e.code === 'ENOSPC' || e.code === 'EDQUOT' || e.code === 'NO_SPACE') return true;
  }
  return false;
}

/** The one line a full disk is reported with, by every transport (HTTP 507, CLI exit 1). */
export const NO_SPACE_MESSAGE = 'no space left on the device that holds the runs root (disk full or quota exceeded)';

/** The message of a thrown value (an Error's message, anything else as a string): the one form every lib reports a cause in. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Every failure of @app/storage: a stable `code` for callers plus a one-line message. */
export class StorageError extends Error {
  override readonly name = 'StorageError';

  constructor(
    readonly code: StorageErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Wraps a Node fs error as StorageError('NOT_FOUND' | 'IO', '<context>: <reason>'). */
export function ioError(context: string, err: unknown): StorageError {
  const e = err as NodeJS.ErrnoException;
  if (isNoSpace(err)) return new StorageError('NO_SPACE', `${context}: ${NO_SPACE_MESSAGE} (${e?.code})`, { cause: err });
  const code = e?.code === 'ENOENT' ? 'NOT_FOUND' : 'IO';
  return new StorageError(code, `${context}: ${e?.message ?? String(err)}`, { cause: err });
}
