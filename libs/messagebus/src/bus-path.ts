import { lstatSync, type Stats } from 'node:fs';
import { BusError, ioError } from './errors';

/**
 * Checks a bus path before use (cli-storage.md §4.1): it must not be a symlink and, when it
 * exists, must be a regular file. Returns the lstat result, or undefined when the file is missing.
 */
export function checkBusPath(path: string): Stats | undefined {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw ioError('stat', path, err);
  }
  if (st.isSymbolicLink()) throw new BusError('SYMLINK', `message bus path "${path}" is a symlink`);
  if (!st.isFile()) throw new BusError('NOT_REGULAR_FILE', `message bus path "${path}" is not a regular file`);
  return st;
}
