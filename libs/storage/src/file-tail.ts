import * as fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import type { ChangeFeed } from './change-feed';
import { openRegularFile, readFdRange } from './safe-read';

export type ChunkListener = (chunk: string, truncated: boolean) => void;

/**
 * One shared reader per file: keeps a byte offset and reads only the bytes appended since the last
 * read. Woken by ChangeFeed notifications, with a polling fallback. A shrinking file counts as
 * truncated: reading restarts at byte 0.
 */
export class FileTail {
  offset: number;
  private decoder = new StringDecoder('utf8');
  private readonly listeners = new Set<ChunkListener>();
  private readonly stopWatch: () => void;

  constructor(
    readonly path: string,
    feed: ChangeFeed,
    pollMs: number,
    startAtEnd: boolean,
    /** When set, the file is read only while its real path lies inside this folder. */
    readonly root?: string,
  ) {
    this.offset = startAtEnd ? fileSize(path) : 0;
    let stop: () => void = () => undefined;
    try {
      stop = feed.watch(path, () => this.poll(), { pollMs });
    } catch {
      // ChangeFeed polls as well; a failed watch only loses the fast path
    }
    this.stopWatch = stop;
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  on(listener: ChunkListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Reads [from, offset) — the part of the file this tail has already passed (from byte `from`). */
  readHead(from = 0): string {
    return readBytes(this.path, Math.min(from, this.offset), this.offset, this.root).toString('utf8');
  }

  poll(): void {
    const size = fileSize(this.path);
    let truncated = false;
    if (size < this.offset) {
      this.offset = 0;
      this.decoder = new StringDecoder('utf8');
      truncated = true;
    }
    if (size === this.offset && !truncated) return;
    const bytes = readBytes(this.path, this.offset, size, this.root);
    this.offset += bytes.length;
    const text = this.decoder.write(bytes);
    if (text === '' && !truncated) return;
    for (const listener of [...this.listeners]) listener(text, truncated);
  }

  close(): void {
    this.stopWatch();
    this.listeners.clear();
  }
}

export function fileSize(path: string): number {
  try {
    const st = fs.statSync(path);
    return st.isFile() ? st.size : 0;
  } catch {
    return 0;
  }
}

/** An fd of `path` when it is a regular file (FIFOs, devices, symlink loops read as empty). */
function openForTail(path: string, root?: string): number | undefined {
  try {
    return openRegularFile(path, { root })?.fd;
  } catch {
    return undefined;
  }
}

function readBytes(path: string, from: number, to: number, root?: string): Buffer {
  if (to <= from) return Buffer.alloc(0);
  const fd = openForTail(path, root);
  if (fd === undefined) return Buffer.alloc(0);
  try {
    return readFdRange(fd, from, to);
  } finally {
    fs.closeSync(fd);
  }
}

export function readFileRange(path: string, from: number, to: number): string {
  return readBytes(path, from, to).toString('utf8');
}

/** Reference-counted registry so every client of one file shares one FileTail. */
export class FileTailRegistry {
  private readonly tails = new Map<string, { tail: FileTail; refs: number }>();

  constructor(
    private readonly feed: ChangeFeed,
    private readonly pollMs: number,
    /** Tails read only files whose real path lies inside this folder (the runs root). */
    private readonly root?: string,
  ) {}

  acquire(path: string): FileTail {
    let entry = this.tails.get(path);
    if (!entry) {
      entry = { tail: new FileTail(path, this.feed, this.pollMs, true, this.root), refs: 0 };
      this.tails.set(path, entry);
    }
    entry.refs++;
    return entry.tail;
  }

  release(path: string): void {
    const entry = this.tails.get(path);
    if (!entry) return;
    if (--entry.refs <= 0) {
      entry.tail.close();
      this.tails.delete(path);
    }
  }

  get size(): number {
    return this.tails.size;
  }

  closeAll(): void {
    for (const { tail } of this.tails.values()) tail.close();
    this.tails.clear();
  }
}

/**
 * Scans [0, end) of a file in 64 KiB chunks (constant memory) and calls `onLine` for each complete
 * line; returns the number of complete lines and the trailing partial line.
 */
function scanLines(path: string, end: number, onLine?: (line: string, n: number) => void, root?: string): { count: number; partial: string } {
  const fd = openForTail(path, root);
  if (fd === undefined) return { count: 0, partial: '' };
  const buf = Buffer.alloc(64 * 1024);
  const decoder = new StringDecoder('utf8');
  let count = 0;
  let partial = '';
  try {
    for (let pos = 0; pos < end; ) {
      const n = fs.readSync(fd, buf, 0, Math.min(buf.length, end - pos), pos);
      if (n <= 0) break;
      pos += n;
      const text = partial + decoder.write(buf.subarray(0, n));
      let start = 0;
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
        count++;
        if (onLine) {
          const line = text.slice(start, nl);
          onLine(line.endsWith('\r') ? line.slice(0, -1) : line, count);
        }
        start = nl + 1;
      }
      partial = text.slice(start);
    }
  } finally {
    fs.closeSync(fd);
  }
  return { count, partial };
}

/**
 * Splits a FileTail's chunks into complete lines, numbering them absolutely from the start of the
 * file (the complete lines already passed are counted once, in chunks, when the view is created).
 */
export class LineView {
  count: number;
  private partial: string;
  private readonly off: () => void;

  constructor(
    readonly tail: FileTail,
    onLine: (line: string, number: number) => void,
  ) {
    const head = scanLines(tail.path, tail.offset, undefined, tail.root);
    this.count = head.count;
    this.partial = head.partial;
    this.off = tail.on((chunk, truncated) => {
      if (truncated) this.partial = '';
      const text = this.partial + chunk;
      const pieces = text.split('\n');
      this.partial = pieces.pop() ?? '';
      for (const piece of pieces) {
        this.count++;
        onLine(piece.endsWith('\r') ? piece.slice(0, -1) : piece, this.count);
      }
    });
  }

  close(): void {
    this.off();
  }
}

/** Complete lines (from, to] of a file, 1-based absolute numbering; used to replay after Last-Event-ID. */
export function readLines(path: string, from: number, to: number, root?: string): string[] {
  if (to <= from) return [];
  const out: string[] = [];
  scanLines(
    path,
    fileSize(path),
    (line, n) => {
      if (n > from && n <= to) out.push(line);
    },
    root,
  );
  return out;
}
