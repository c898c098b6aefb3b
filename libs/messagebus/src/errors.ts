import { constants } from 'node:os';
import { dirname } from 'node:path';
import { isNoSpace, NO_SPACE_MESSAGE } from '@app/storage/storage.errors';

export type BusErrorCode =
  | 'INVALID_MESSAGE'
  | 'LOCK_TIMEOUT'
  | 'NOT_REGULAR_FILE'
  | 'SYMLINK'
  | 'SINCE_NOT_FOUND'
  | 'TOO_LARGE'
  | 'NO_SPACE'
  | 'IO';

export class BusError extends Error {
  override readonly name = 'BusError';
  constructor(
    readonly code: BusErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Wraps a node fs error as BusError('IO') with a short, path-bearing message. */
export function ioError(action: string, path: string, err: unknown): BusError {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT' && action === 'open') {
    return new BusError('IO', `open message bus "${path}": its folder ${dirname(path)} does not exist (check --root/--project/--task; a task folder is created by \`run-agent task\` or \`job\`)`);
  }
  if (isNoSpace(err)) return new BusError('NO_SPACE', `${action} message bus "${path}": ${NO_SPACE_MESSAGE} (${code})`);
  const detail = (code && !code.startsWith('Unknown')) ? code : errnoName(err) ?? code ?? (err instanceof Error ? err.message : String(err));
  return new BusError('IO', `${action} message bus "${path}": ${detail}`);
}

/** The errno's name when libuv has none for it (EDQUOT reads "Unknown system error -122"). */
function errnoName(err: unknown): string | undefined {
  const errno = (err as NodeJS.ErrnoException)?.errno;
  if (typeof errno !== 'number') return undefined;
  return Object.entries(constants.errno).find(([, v]) => v === -errno)?.[0];
}
