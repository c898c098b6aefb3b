import { chmodSync, closeSync, constants, existsSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ioError } from './storage.errors';

/**
 * Writes `path` atomically: a temp file in the same folder (`tempPattern`'s `*` replaced by a
 * unique part, default `<name>.*.tmp`), fsync, chmod 0644, rename over the target, fsync the
 * folder (so the rename itself survives a power loss, issue #31). The temp file is removed on
 * failure, so readers only ever see the old or the new complete file; a return means the new file
 * is on disk. `fsync: false` keeps the atomicity but skips both flushes, for records that a later
 * durable write replaces.
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
    if (opts.fsync !== false) fsyncDir(dirname(path));
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
    await fsyncDirAsync(dirname(path));
  } catch (err) {
    await rm(tmp, { force: true });
    throw ioError(`write ${path}`, err);
  }
}

/** Filesystems that cannot fsync a directory say so with these; there is nothing more to flush. */
const DIR_FSYNC_UNSUPPORTED = new Set(['EINVAL', 'ENOTSUP', 'EOPNOTSUPP', 'EISDIR', 'EBADF']);

/**
 * fsyncs a folder, so that a file created, renamed or removed in it survives a power loss (POSIX
 * makes the entry durable only with its directory). Throws on a real I/O error (EIO, ENOSPC, …).
 */
export function fsyncDir(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (err) {
    throw ioError(`open folder ${dir}`, err);
  }
  try {
    fsyncSync(fd);
  } catch (err) {
    if (!DIR_FSYNC_UNSUPPORTED.has((err as NodeJS.ErrnoException).code ?? '')) throw ioError(`fsync folder ${dir}`, err);
  } finally {
    closeSync(fd);
  }
}

/** fsyncDir on libuv's thread pool. */
export async function fsyncDirAsync(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } catch (err) {
    if (!DIR_FSYNC_UNSUPPORTED.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
  } finally {
    await handle.close();
  }
}

/**
 * Creates (or replaces) a small marker file durably, in place: write, fsync, fsync the folder. For
 * markers whose content is empty or advisory (DONE); records that must never read half-written use
 * writeFileAtomic. `flag: 'wx'` creates only; on any failure a file this call created is removed
 * (a marker that is not durable is not left behind).
 */
export function writeFileDurable(path: string, data: string, opts: { flag?: 'w' | 'wx' } = {}): void {
  let fd: number | undefined;
  let created = false;
  try {
    const existed = opts.flag !== 'wx' && existsSync(path);
    fd = openSync(path, opts.flag ?? 'w', 0o644);
    created = !existed;
    const buf = Buffer.from(data, 'utf8');
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    fsyncDir(dirname(path));
  } catch (err) {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        // already failing
      }
    }
    if (created) rmSync(path, { force: true });
    throw err;
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
