import { closeSync, constants, openSync, renameSync } from 'node:fs';
import { tryFlock, unflock } from '@app/storage/file-lock';
import { checkBusPath } from './bus-path';
import { BusError, ioError } from './errors';
import { archivePath } from './writer';

const LOCK_TIMEOUT_MS = 10_000;
const LOCK_POLL_MS = 10;

/**
 * Renames the bus to `<path>.<UTC YYYYMMDD-HHMMSS>.archived` (cli-storage.md §4.6) while holding
 * the writers' lock, so no append is split across the two files. Returns the archive path, or
 * undefined when there is no bus file. Writers holding the old file open notice the new inode under
 * their lock and reopen; followers drain the old file, then continue with the new one.
 */
export function rotateBus(path: string, now: Date = new Date()): string | undefined {
  if (!checkBusPath(path)) return undefined;
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw ioError('open', path, err);
  }
  try {
    const deadline = Date.now() + LOCK_TIMEOUT_MS;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    while (!tryFlock(fd, 'ex')) {
      if (Date.now() >= deadline) throw new BusError('LOCK_TIMEOUT', `rotate message bus "${path}": lock timeout`);
      Atomics.wait(pause, 0, 0, LOCK_POLL_MS);
    }
    try {
      const target = archivePath(path, now);
      renameSync(path, target);
      return target;
    } catch (err) {
      throw ioError('rotate', path, err);
    } finally {
      unflock(fd);
    }
  } finally {
    closeSync(fd);
  }
}
