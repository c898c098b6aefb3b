import { lstatSync, mkdirSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';
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
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw ioError('stat', path, err);
  }
  if (st.isSymbolicLink()) throw new BusError('SYMLINK', `message bus path "${path}" is a symlink`);
  if (!st.isFile()) throw new BusError('NOT_REGULAR_FILE', `message bus path "${path}" is not a regular file`);
  return st;
}

/**
 * A project's bus is the first thing a new user posts to: creates the folder of a project bus
 * (`<root>/<project>/PROJECT-MESSAGE-BUS.md`) when it is missing. A task's bus still needs its
 * task folder, so callers use this for project buses only (`run-agent bus post --project`, MCP bus_post).
 */
export function createProjectBusFolder(projectBusPath: string): void {
  try {
    mkdirSync(dirname(projectBusPath), { recursive: true });
  } catch (err) {
    throw ioError('create folder of', projectBusPath, err);
  }
}
