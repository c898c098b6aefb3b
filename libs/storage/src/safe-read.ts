import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, statSync, type Stats } from 'node:fs';
import { basename, dirname, join, relative, isAbsolute } from 'node:path';
import { StorageError } from './storage.errors';

/*
 * The one rule for reading files that come from the runs root on a request path (issue #29):
 * only regular files, only inside the root, never more than a cap. A symlink to /dev/zero, a FIFO
 * in place of a run file, or a symlinked folder that leads out of the root is refused before a
 * single byte is read, and open() itself cannot block (O_NONBLOCK: a FIFO without a writer).
 */

/** Largest file a request reads whole (the API's file routes serve the last bytes past it). */
export const MAX_SERVED_FILE_BYTES = 8 * 1024 * 1024;
/** Largest record file (run-info.yaml, TASK.md, …) read on a listing path. */
export const MAX_RECORD_FILE_BYTES = 4 * 1024 * 1024;

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

function isInside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

function refused(file: string, why: string): StorageError {
  return new StorageError('NOT_REGULAR_FILE', `${file}: ${why}`);
}

export interface RegularFileOptions {
  /** The real path must lie inside this folder. */
  root?: string;
  /**
   * The file itself must not be a symbolic link (refused, "is a symbolic link (refused)"), e.g. a
   * repository's script checked out in a worktree; the folders above it are resolved as usual.
   */
  noFollow?: boolean;
}

/** The real path of `file`, or of its folder plus its own name with `noFollow` (its last component is never followed). */
function realPathOf(file: string, noFollow: boolean | undefined): string {
  return noFollow ? join(realpathSync(dirname(file)), basename(file)) : realpathSync(file);
}

/**
 * Opens `file` for reading when it is a regular file (inside `root`, when given, after resolving
 * every symlink of the path). Returns undefined when it does not exist; throws StorageError
 * NOT_REGULAR_FILE (symlink out of the root, a symlink at all with `noFollow`, FIFO, device,
 * folder, …) or IO.
 */
export function openRegularFile(file: string, opts: RegularFileOptions = {}): { fd: number; stat: Stats } | undefined {
  let real: string;
  try {
    real = realPathOf(file, opts.noFollow);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    if (code === 'ELOOP') throw refused(file, 'symlink loop');
    throw new StorageError('IO', `open ${file}: ${(err as Error).message}`, { cause: err });
  }
  if (opts.root !== undefined) {
    let root: string;
    try {
      root = realpathSync(opts.root);
    } catch {
      root = opts.root;
    }
    if (!isInside(root, real)) throw refused(file, 'resolves outside the runs root');
  }
  let fd: number;
  try {
    fd = openSync(real, OPEN_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP' && opts.noFollow) throw refused(file, 'is a symbolic link (refused)');
    if (code === 'ELOOP' || code === 'ENXIO' || code === 'EISDIR') throw refused(file, 'not a regular file');
    throw new StorageError('IO', `open ${file}: ${(err as Error).message}`, { cause: err });
  }
  const stat = fstatSync(fd);
  if (!stat.isFile()) {
    closeSync(fd);
    throw refused(file, 'not a regular file');
  }
  return { fd, stat };
}

/** Reads [from, to) of an open file (fewer bytes when it is shorter). */
export function readFdRange(fd: number, from: number, to: number): Buffer {
  if (to <= from) return Buffer.alloc(0);
  const buf = Buffer.allocUnsafe(to - from);
  let off = 0;
  while (off < buf.length) {
    const n = readSync(fd, buf, off, buf.length - off, from + off);
    if (n <= 0) break;
    off += n;
  }
  return off === buf.length ? buf : buf.subarray(0, off);
}

export interface CappedText {
  text: string;
  stat: Stats;
  /** The file was longer than the cap: `text` is its last bytes, starting at a line start. */
  truncated: boolean;
}

/**
 * The text of a regular file (see openRegularFile), at most `maxBytes` of it: a longer file yields
 * its last `maxBytes` from the first line start in them. Undefined when the file does not exist.
 */
export function readRegularFileCapped(file: string, opts: RegularFileOptions & { maxBytes?: number } = {}): CappedText | undefined {
  const opened = openRegularFile(file, opts);
  if (!opened) return undefined;
  const { fd, stat } = opened;
  const max = opts.maxBytes ?? MAX_SERVED_FILE_BYTES;
  try {
    if (stat.size <= max) return { text: readFdRange(fd, 0, stat.size).toString('utf8'), stat, truncated: false };
    let buf = readFdRange(fd, stat.size - max, stat.size);
    const nl = buf.indexOf(0x0a);
    if (nl >= 0 && nl < buf.length - 1) buf = buf.subarray(nl + 1);
    return { text: buf.toString('utf8'), stat, truncated: true };
  } finally {
    closeSync(fd);
  }
}

/**
 * The whole text of a small record file that must be a regular file (run-info.yaml, TASK.md, …):
 * ENOENT propagates as the fs error would (code 'ENOENT'), anything not regular or over
 * `maxBytes` throws StorageError. The drop-in for readFileSync(path, 'utf8') on request paths.
 */
export function readRecordText(file: string, maxBytes = MAX_RECORD_FILE_BYTES): string {
  const opened = openRegularFile(file);
  if (!opened) throw Object.assign(new Error(`ENOENT: no such file or directory, open '${file}'`), { code: 'ENOENT' });
  try {
    if (opened.stat.size > maxBytes) throw new StorageError('IO', `${file}: ${opened.stat.size} bytes, over the ${maxBytes}-byte limit`);
    return readFdRange(opened.fd, 0, opened.stat.size).toString('utf8');
  } finally {
    closeSync(opened.fd);
  }
}

/**
 * The check before a file is served or tailed (file routes, SSE): its real path lies inside the
 * root and, when it exists, it is a regular file. A missing file passes (it may appear later).
 */
export function checkServableFile(root: string, file: string, what: string): void {
  checkRealPathInside(root, file, what);
  let st: Stats;
  try {
    st = statSync(file);
  } catch {
    return;
  }
  if (!st.isFile()) throw refused(what, 'not a regular file');
}

/** Refuses `target` unless its real path (symlinks resolved) lies inside the real path of `root`; a missing target passes. */
export function checkRealPathInside(root: string, target: string, what: string): void {
  let real: string;
  try {
    real = realpathSync(target);
  } catch {
    return;
  }
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    realRoot = root;
  }
  if (!isInside(realRoot, real)) throw refused(what, 'resolves outside the runs root');
}
