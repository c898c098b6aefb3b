import { closeSync, existsSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { ioError } from './errors';
import { foreignTailStart } from './foreign';
import { EntryScanner } from './parser';
import { alignedWindow, readRange } from './reader';
import { repairPrefix } from './repair';
import type { BusMessage } from './types';

const REPAIR_WINDOW = 128 * 1024;

export interface ForeignTail {
  /** Offset of the unterminated foreign last line (foreign.ts). */
  at: number;
  /** The complete record the foreign bytes follow (undefined: they follow no record). */
  after: BusMessage | undefined;
}

/** The file's foreign unterminated tail, if it has one. */
export function findForeignTail(fd: number, size: number, path: string): ForeignTail | undefined {
  const w = alignedWindow(fd, size, REPAIR_WINDOW, path);
  const at = foreignTailStart(w.data);
  if (at < 0) return undefined;
  const scanner = new EntryScanner(w.start === 0 ? 'seek' : 'emitted');
  scanner.push(w.data);
  const [after] = scanner.finish();
  return { at: w.start + at, after };
}

/** `<bus>.quarantine-<UTC YYYYMMDD-HHMMSS>` (then `-2`, `-3`, … when taken). */
export function quarantinePath(path: string, now: Date = new Date()): string {
  const iso = now.toISOString();
  const stamp = `${path}.quarantine-${iso.slice(0, 10).replace(/-/g, '')}-${iso.slice(11, 19).replace(/:/g, '')}`;
  let candidate = stamp;
  for (let n = 2; existsSync(candidate); n++) candidate = `${stamp}-${n}`;
  return candidate;
}

/** Copies `data` to a new side file, fsync'd (created exclusively: never overwrites). */
function writeSideFile(target: string, data: Buffer): void {
  let fd: number | undefined;
  try {
    fd = openSync(target, 'wx', 0o644);
    let off = 0;
    while (off < data.length) off += writeSync(fd, data, off, data.length - off);
    fsyncSync(fd);
  } catch (err) {
    throw ioError('quarantine', target, err);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export interface QuarantineResult {
  /** Side file holding a copy of the foreign bytes. */
  file: string;
  bytes: number;
  /** Text to append (under the lock) before the next entries: it ends with the ERROR entry naming `file`. */
  lead: string;
}

/**
 * Foreign bytes never cost a complete record (issue #31): the foreign tail is copied to a side
 * file and left in place; the returned lead ends its line and adds an ERROR entry naming the side
 * file. After a complete record the ERROR's fence follows the foreign line directly (no blank
 * separator): readers then drop that line and keep the record (parser.ts). Nothing is truncated.
 */
export function quarantineForeignTail(
  fd: number,
  size: number,
  path: string,
  tail: ForeignTail,
  errorEntry: (body: string, context: BusMessage | undefined) => string,
): QuarantineResult {
  const bytes = size - tail.at;
  const file = quarantinePath(path);
  writeSideFile(file, readRange(fd, tail.at, size, path));
  const body =
    `message bus: ${bytes} unreadable byte(s) at the end of ${path} (offset ${tail.at}, not written by a bus writer) ` +
    `were copied to ${file} and left in place; readers skip them${tail.after ? ` (the record before them, ${tail.after.msg_id}, is intact)` : ''}`;
  const entry = errorEntry(body, tail.after);
  const lead = tail.after ? `\n${entry}` : `${repairPrefix(fd, size, path)}\n${entry}`;
  return { file, bytes, lead };
}
