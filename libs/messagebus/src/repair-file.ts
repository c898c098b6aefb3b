import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import { acquireFlock, unflock } from '@app/storage/file-lock';
import { checkBusPath } from './bus-path';
import { BusError, ioError } from './errors';
import { appendAllOrNothing } from '@app/storage/append';
import { type BusRepairReport, inspectBus, tornEntryStart, truncateTo } from './repair';
import { findForeignTail, quarantineForeignTail } from './quarantine';
import { errorEntry } from './prepare';

export interface BusRepairResult extends BusRepairReport {
  /** Bytes cut off the end (the unfinished final record); 0 when nothing was changed. */
  removedBytes: number;
  /** Side file holding a copy of foreign bytes found at the end (left in place, ended by an ERROR entry). */
  quarantined?: { file: string; bytes: number };
}

/**
 * `run-agent bus repair` (issue #11): under the writers' lock, reports records that readers skip
 * because they lack their terminator and cuts an unfinished final record off the file (what the
 * next append would do anyway). Records in the middle stay as they are: readers already skip them.
 * Foreign bytes at the end (not a torn record of ours) are never cut: they are copied to a
 * quarantine side file and ended by an ERROR entry naming it (quarantine.ts).
 */
export async function repairBusFile(path: string, lockTimeoutMs = 10_000): Promise<BusRepairResult> {
  if (!checkBusPath(path)) throw new BusError('IO', `message bus "${path}" does not exist`);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDWR | constants.O_APPEND | constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new BusError('SYMLINK', `message bus path "${path}" is a symlink`);
    throw ioError('open', path, err);
  }
  try {
    try {
      await acquireFlock(fd, 'ex', lockTimeoutMs);
    } catch {
      throw new BusError('LOCK_TIMEOUT', `lock message bus "${path}": lock timeout`);
    }
    try {
      const size = fstatSync(fd).size;
      const foreign = findForeignTail(fd, size, path);
      if (foreign) {
        const q = quarantineForeignTail(fd, size, path, foreign, (body, after) => errorEntry(body, after ?? { project_id: '', task_id: '', run_id: '' }));
        try {
          appendAllOrNothing(fd, Buffer.from(q.lead), size, { fsync: true });
        } catch (err) {
          throw ioError('write', path, err);
        }
        return { ...inspectBus(fd, size + Buffer.byteLength(q.lead), path), removedBytes: 0, quarantined: { file: q.file, bytes: q.bytes } };
      }
      const report = inspectBus(fd, size, path);
      let removedBytes = 0;
      if (report.tornTailBytes > 0) {
        const cut = tornEntryStart(fd, size, path);
        if (cut !== undefined) removedBytes = size - truncateTo(fd, cut, path);
      }
      return { ...report, removedBytes };
    } finally {
      unflock(fd);
    }
  } finally {
    closeSync(fd);
  }
}
