import { chmodSync, closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomSlug } from './ids';
import { ioError } from './storage.errors';

/**
 * Writes `path` atomically: a temp file in the same folder (`tempPattern`'s `*` replaced by random
 * digits, default `<name>.*.tmp`), fsync, chmod 0644, rename over the target. The temp file is
 * removed on failure, so readers only ever see the old or the new complete file.
 */
export function writeFileAtomic(path: string, data: string | Buffer, tempPattern?: string): void {
  const dir = dirname(path);
  const pattern = tempPattern ?? `${basename(path)}.*.tmp`;
  const tmp = join(dir, pattern.replace('*', randomSlug(10, '0123456789')));
  let fd: number | undefined;
  try {
    fd = openSync(tmp, 'wx', 0o644);
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
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
