import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { checkBusPath } from './bus-path';
import { BusError, ioError } from './errors';
import { EntryScanner, parseAll } from './parser';
import type { BusMessage } from './types';

const MIN_WINDOW = 64 * 1024;
const BYTES_PER_MESSAGE_GUESS = 384;
// An entry opener: the separator + previous terminator, a fence, then the first header key.
// (A header-closing fence follows a header line, never an empty line, so bodies that start with
// "msg_id:" are not mistaken for headers.)
const ENTRY_START = Buffer.from('\n\n---\nmsg_id:');
// O_NONBLOCK: a FIFO swapped in after the check must not block open() (issue #29); reads of a
// regular file ignore it.
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export function openForRead(path: string): number | undefined {
  if (!checkBusPath(path)) return undefined;
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new BusError('SYMLINK', `message bus path "${path}" is a symlink`);
    throw ioError('open', path, err);
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw new BusError('NOT_REGULAR_FILE', `message bus path "${path}" is not a regular file`);
  }
  return fd;
}

export function readRange(fd: number, start: number, end: number, path: string): Buffer {
  const buf = Buffer.allocUnsafe(end - start);
  let off = 0;
  try {
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, start + off);
      if (n === 0) break;
      off += n;
    }
  } catch (err) {
    throw ioError('read', path, err);
  }
  return off === buf.length ? buf : buf.subarray(0, off);
}

/** A window [start, size) whose first byte opens an entry (or is the file start). */
export interface Window {
  start: number;
  data: Buffer;
}

export function alignedWindow(fd: number, size: number, windowBytes: number, path: string): Window {
  if (windowBytes >= size) return { start: 0, data: readRange(fd, 0, size, path) };
  const raw = readRange(fd, size - windowBytes, size, path);
  const at = raw.indexOf(ENTRY_START);
  if (at < 0) return { start: size, data: Buffer.alloc(0) };
  const skip = at + 2; // keep the fence line, drop the separator
  return { start: size - windowBytes + skip, data: raw.subarray(skip) };
}

function parseWindow(w: Window): BusMessage[] {
  return parseAll(w.data, w.start === 0 ? 'seek' : 'emitted');
}

/** Entries opening in an aligned window (counted with native indexOf, no parsing). */
function entryStarts(w: Window): number {
  if (w.data.length === 0) return 0;
  let count = 1;
  for (let at = w.data.indexOf(ENTRY_START); at >= 0; at = w.data.indexOf(ENTRY_START, at + ENTRY_START.length)) count++;
  return count;
}

/**
 * Last `n` messages using growing tail windows (whole file when needed). A window is parsed only
 * once it holds `n` entry openers, so large messages (issue #12: bodies up to 16 MiB) cost one
 * parse of about the bytes returned instead of a parse per doubling.
 */
function readLast(fd: number, size: number, n: number, path: string): BusMessage[] {
  if (size <= 0) return [];
  let window = Math.max(MIN_WINDOW, n * BYTES_PER_MESSAGE_GUESS);
  for (;;) {
    const w = alignedWindow(fd, size, window, path);
    if (w.start > 0 && entryStarts(w) < n) {
      window *= 2;
      continue;
    }
    const msgs = parseWindow(w);
    if (msgs.length >= n || w.start === 0) return msgs.slice(Math.max(0, msgs.length - n));
    window *= 2;
  }
}

/** The last `n` messages that end at or before byte `end` (an entry boundary or the file size). */
export function readLastBefore(fd: number, end: number, n: number, path: string): BusMessage[] {
  return readLast(fd, end, n, path);
}

function sinceNotFound(id: string): BusError {
  return new BusError('SINCE_NOT_FOUND', `since id "${id}" not found`);
}

/** Messages strictly after `sinceId`, searching tail windows first (cost ~ distance from the end). */
function readSince(fd: number, size: number, sinceId: string, path: string): { window: Window; after: BusMessage[] } {
  const needle = Buffer.from(sinceId);
  let window = MIN_WINDOW;
  for (;;) {
    const w = alignedWindow(fd, size, window, path);
    if (w.data.indexOf(needle) >= 0) {
      const msgs = parseWindow(w);
      const i = msgs.findIndex((m) => m.msg_id === sinceId);
      if (i >= 0) return { window: w, after: msgs.slice(i + 1) };
    }
    if (w.start === 0) throw sinceNotFound(sinceId);
    window *= 2;
  }
}

/**
 * Reads a bus file without locking. A missing file reads as empty. `sinceId`: only messages
 * after that id (BusError SINCE_NOT_FOUND when absent); `last`: only the last N (≤0 = all).
 */
export function readMessages(path: string, opts: { sinceId?: string; last?: number } = {}): BusMessage[] {
  const fd = openForRead(path);
  if (fd === undefined) return [];
  try {
    const size = fstatSync(fd).size;
    const last = opts.last ?? 0;
    const sinceId = opts.sinceId?.trim();
    if (sinceId) {
      const { after } = readSince(fd, size, sinceId, path);
      return last > 0 ? after.slice(Math.max(0, after.length - last)) : after;
    }
    if (last > 0) return readLast(fd, size, last, path);
    return parseAll(readRange(fd, 0, size, path));
  } finally {
    closeSync(fd);
  }
}

export interface BusCursorOptions {
  /** Start after this message (BusError SINCE_NOT_FOUND when absent). */
  sinceId?: string;
  /** The first readNew() returns the last N existing messages, then only new ones. */
  last?: number;
  /** Skip everything already in the file. */
  fromEnd?: boolean;
}

/**
 * Incremental reader: keeps the file open, a byte offset and the parser state, so each readNew()
 * reads only bytes appended since the previous call. A rotated/replaced file is drained, then the
 * new file is read from its start; a file truncated in place is re-read from its start.
 */
export class BusCursor {
  private fd: number | undefined;
  private ino = -1;
  private offset = 0;
  private scanner = new EntryScanner('seek');
  private initial: BusMessage[] = [];

  constructor(
    readonly path: string,
    opts: BusCursorOptions = {},
  ) {
    const sinceId = opts.sinceId?.trim();
    const fd = openForRead(path);
    if (fd === undefined) {
      if (sinceId) throw sinceNotFound(sinceId);
      return;
    }
    try {
      const st = fstatSync(fd);
      this.fd = fd;
      this.ino = st.ino;
      if (sinceId) {
        const { window } = readSince(fd, st.size, sinceId, path);
        const msgs = this.startAt(window);
        this.initial = msgs.slice(msgs.findIndex((m) => m.msg_id === sinceId) + 1);
        if (opts.last && opts.last > 0) this.initial = this.initial.slice(Math.max(0, this.initial.length - opts.last));
      } else if ((opts.last && opts.last > 0) || opts.fromEnd) {
        const n = opts.fromEnd ? 1 : opts.last!;
        let windowBytes = Math.max(MIN_WINDOW, n * BYTES_PER_MESSAGE_GUESS);
        let msgs: BusMessage[];
        for (;;) {
          const w = alignedWindow(fd, st.size, windowBytes, path);
          msgs = this.startAt(w);
          if (msgs.length >= n || w.start === 0) break;
          windowBytes *= 2;
        }
        this.initial = opts.fromEnd ? [] : msgs.slice(Math.max(0, msgs.length - n));
      }
    } catch (err) {
      this.close();
      throw err;
    }
  }

  /** Parses `w` as the cursor's starting point; returns its messages (read up to the window end). */
  private startAt(w: Window): BusMessage[] {
    this.scanner = new EntryScanner(w.start === 0 ? 'seek' : 'emitted');
    this.offset = w.start + w.data.length;
    const msgs = this.scanner.push(w.data);
    msgs.push(...this.drain(), ...this.scanner.finish());
    return msgs;
  }

  /** Messages appended since the previous call (the first call also returns the initial ones). */
  readNew(): BusMessage[] {
    const out = this.initial;
    this.initial = [];
    if (this.fd === undefined) {
      const fd = openForRead(this.path);
      if (fd === undefined) return out;
      this.reset(fd);
    }
    out.push(...this.drain(), ...this.scanner.finish());
    const st = checkBusPath(this.path);
    if (st && st.ino !== this.ino) {
      // Rotated or replaced: writers stopped using the old inode before the rename, so one more
      // drain of it is complete; then continue with the new file's messages.
      out.push(...this.drain(), ...this.scanner.finish());
      const fd = openForRead(this.path);
      this.closeFd();
      if (fd !== undefined) {
        this.reset(fd);
        out.push(...this.drain(), ...this.scanner.finish());
      }
    } else if (st && st.size < this.offset) {
      this.offset = 0;
      this.scanner = new EntryScanner('seek');
      out.push(...this.drain(), ...this.scanner.finish());
    }
    return out;
  }

  close(): void {
    this.closeFd();
  }

  private closeFd(): void {
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {
        // already closed
      }
    }
    this.fd = undefined;
  }

  private reset(fd: number): void {
    this.fd = fd;
    this.ino = fstatSync(fd).ino;
    this.offset = 0;
    this.scanner = new EntryScanner('seek');
  }

  /** Reads until the size stops growing, so a final entry is judged complete only at a stable EOF. */
  private drain(): BusMessage[] {
    const out: BusMessage[] = [];
    if (this.fd === undefined) return out;
    for (;;) {
      const size = fstatSync(this.fd).size;
      if (size <= this.offset) return out;
      const data = readRange(this.fd, this.offset, size, this.path);
      this.offset += data.length;
      out.push(...this.scanner.push(data));
    }
  }
}
