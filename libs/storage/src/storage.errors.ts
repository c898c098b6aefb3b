/** CORRUPT: a record file exists but cannot be parsed (shown as status `corrupt`, listed by `run-agent doctor`). */
export type StorageErrorCode = 'INVALID_ID' | 'NOT_FOUND' | 'LOCK_TIMEOUT' | 'INVALID_CONFIG' | 'IO' | 'CONFLICT' | 'CORRUPT';

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
  const code = e?.code === 'ENOENT' ? 'NOT_FOUND' : 'IO';
  return new StorageError(code, `${context}: ${e?.message ?? String(err)}`, { cause: err });
}
