import { closeSync, constants, fstatSync, fsyncSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { flockSync } from './flock';

/**
 * All-or-nothing append for append-only files (issue #11): the caller holds the file's lock and
 * passes the size it saw under that lock; the data is written in full (short writes looped) or,
 * on any error (ENOSPC, EIO, EFBIG, …), the file is truncated back to `sizeBefore` and the error
 * rethrown, so no partial record is ever left for readers. Returns the number of bytes written.
 * Plain (Nest-free) module: the CLI fast path imports it through the bus writer.
 */
export function appendAllOrNothing(fd: number, data: Buffer, sizeBefore: number, opts: { fsync?: boolean } = {}): number {
  let off = 0;
  try {
    while (off < data.length) off += writeSync(fd, data, off, data.length - off);
    if (opts.fsync) fsyncSync(fd);
  } catch (err) {
    if (off > 0 || opts.fsync) {
      try {
        ftruncateSync(fd, sizeBefore);
      } catch {
        // the write error is the one to report; a failed truncate leaves a torn tail that the
        // next writer (under the same lock) removes
      }
    }
    throw err;
  }
  return off;
}

/**
 * Appends one record to an append-only file under an exclusive flock (held for the microseconds
 * of one write; other processes appending the same file wait), all-or-nothing as above. For small
 * line records such as the audit log; the message bus has its own writer (BusWriter).
 */
export function appendRecordSync(path: string, record: string | Buffer, opts: { fsync?: boolean; mode?: number } = {}): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, opts.mode ?? 0o644);
  try {
    flockSync(fd, 'ex');
    try {
      appendAllOrNothing(fd, Buffer.isBuffer(record) ? record : Buffer.from(record), fstatSync(fd).size, { fsync: opts.fsync });
    } finally {
      flockSync(fd, 'un');
    }
  } finally {
    closeSync(fd);
  }
}
