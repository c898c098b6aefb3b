import { chmodSync, closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ioError } from './storage.errors';

/**
 * Writes `path` atomically: a temp file in the same folder (`tempPattern`'s `*` replaced by a
 * unique part, default `<name>.*.tmp`), fsync, chmod 0644, rename over the target. The temp file is
 * removed on failure, so readers only ever see the old or the new complete file. `fsync: false`
 * keeps the atomicity but skips the disk flush, for records that a later durable write replaces.
 */
export function writeFileAtomic(path: string, data: string | Buffer, tempPattern?: string, opts: { fsync?: boolean } = {}): void {
  const tmp = tempPathFor(path, tempPattern);
  let fd: number | undefined;
  try {
    fd = openSync(tmp, 'wx', 0o644);
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    if (opts.fsync !== false) fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    chmodSync(tmp, 0o644);
    renameSync(tmp, path);
  } catch (err) {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        // already failing: the original error is the one to report
      }
    }
    rmSync(tmp, { force: true });
    throw ioError(`write ${path}`, err);
  }
}

/**
 * The same as writeFileAtomic, but the write and fsync run on libuv's thread pool, so a busy
 * process (the runner with many tasks, the server) keeps serving while the disk syncs.
 */
export async function writeFileAtomicAsync(path: string, data: string | Buffer, tempPattern?: string): Promise<void> {
  const tmp = tempPathFor(path, tempPattern);
  try {
    const file = await open(tmp, 'wx', 0o644);
    try {
      await file.writeFile(data);
      await file.sync();
      await file.chmod(0o644);
    } finally {
      await file.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw ioError(`write ${path}`, err);
  }
}

let tempFiles = 0;

/**
 * The temp file's name: the pid, a count of this process's temp files and Math.random digits.
 * It is created exclusively ('wx'), so it only has to differ from the names of other writers: no
 * node:crypto for it, which costs a CLI command ~3 ms to load (docs/decisions.md).
 */
function tempPathFor(path: string, tempPattern?: string): string {
  const pattern = tempPattern ?? `${basename(path)}.*.tmp`;
  const unique = `${process.pid}-${++tempFiles}-${Math.random().toFixed(8).slice(2)}`;
  return join(dirname(path), pattern.replace('*', unique));
}
