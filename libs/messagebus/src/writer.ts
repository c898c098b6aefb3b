import { closeSync, constants, fstatSync, openSync, renameSync } from 'node:fs';
import { dirname, resolve as resolvePath } from 'node:path';
import { appendAllOrNothing } from '@app/storage/append';
import { fsyncDir } from '@app/storage/atomic-write';
import { tryFlock, unflock } from '@app/storage/file-lock';
import { checkBusPath } from './bus-path';
import { BusError, ioError } from './errors';
import { endsTorn, repairPrefix, tornEntryStart, truncateTo } from './repair';
import { MAX_BODY_BYTES, type BusMessage, type NewMessage } from './types';
import { archivePath, errorEntry, prepareMessage } from './prepare';

export { archivePath, errorEntry, prepareMessage };
import { notifyAppended } from './append-observer';
import { findForeignTail, quarantineForeignTail } from './quarantine';

export interface BusWriterOptions {
  /** How long one attempt waits for the exclusive flock (default 10 s, polled every 10 ms). */
  lockTimeoutMs?: number;
  /** Attempts when the lock times out (default 3; backoff 100 ms, 200 ms, …). */
  retries?: number;
  /**
   * fsync every append before acknowledging it (default true, issue #31: a resolved append is on
   * disk; the folder is fsync'd too when the append created the file). `false` only for tests
   * and benchmarks that measure the difference.
   */
  fsync?: boolean;
  /** Rotate the file (inside the lock) once it has at least this many bytes; 0/undefined = never. */
  rotateAtBytes?: number;
  /** Close the kept-open file after this long without appends (default 2 s). */
  idleCloseMs?: number;
  /** Largest accepted body in UTF-8 bytes (default MAX_BODY_BYTES, 16 MiB). */
  maxBodyBytes?: number;
  /**
   * The task owner's fence (OwnerFence of @app/storage, issue #31): every record carries its
   * `owner_epoch` header and is appended only while that epoch is the task's current one; a
   * stale one is rejected with its StaleEpochError and nothing is written.
   */
  fence?: BusFence;
}

/** What the writer needs of an OwnerFence (@app/storage/owner-epoch). */
export interface BusFence {
  readonly epoch: number;
  /** Shared fence lock + epoch check: the held fd, undefined while a claim holds the lock; throws when stale. */
  tryEnter(): number | undefined;
  leave(fd: number): void;
}

let fencedFiles = 0;

interface Pending {
  entry: string;
  msg: BusMessage;
  resolve: (m: BusMessage) => void;
  reject: (e: unknown) => void;
}

const OPEN_FLAGS = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;
const LOCK_POLL_MS = 10;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The open bus file of this process for one path (and option set): shared by every BusWriter for
 * that path, so a process keeps one descriptor per bus and coalesces appends from all its writers.
 */
const sharedFiles = new Map<string, BusFile>();

/**
 * The one door for bus writes. Appends are O_APPEND writes under an exclusive flock on the bus file
 * itself (interoperable with upstream writers). The file stays open between appends (a replaced or
 * rotated file is detected by comparing inodes under the lock; it is closed after idleCloseMs),
 * and appends issued in the same tick, by any BusWriter of this process for the same path, are
 * coalesced into one locked write.
 */
export class BusWriter {
  private readonly file: BusFile;
  private readonly maxBodyBytes: number;
  private readonly fence: BusFence | undefined;

  constructor(
    readonly path: string,
    opts: BusWriterOptions = {},
  ) {
    if (typeof path !== 'string' || path.trim() === '') throw new BusError('INVALID_MESSAGE', 'message bus path is empty');
    this.maxBodyBytes = opts.maxBodyBytes ?? MAX_BODY_BYTES;
    this.fence = opts.fence;
    // a fenced writer's appends are batched only with its own (one epoch check per batch)
    const key = JSON.stringify([resolvePath(path), opts.lockTimeoutMs, opts.retries, opts.fsync, opts.rotateAtBytes, opts.idleCloseMs, opts.fence ? ++fencedFiles : 0]);
    let file = sharedFiles.get(key);
    if (!file) {
      file = new BusFile(path, opts, key);
      sharedFiles.set(key, file);
    }
    this.file = file;
  }

  /** Appends one message; resolves with the stored message (generated msg_id and ts). */
  append(input: NewMessage): Promise<BusMessage> {
    return this.file.append(this.fence ? { ...input, owner_epoch: this.fence.epoch } : input, this.maxBodyBytes);
  }

  /** Closes the kept-open descriptor now (it is reopened by the next append). */
  close(): void {
    this.file.close();
  }
}

class BusFile {
  private readonly lockTimeoutMs: number;
  private readonly retries: number;
  private readonly fsync: boolean;
  private readonly rotateAtBytes: number;
  private readonly idleCloseMs: number;
  private fd: number | undefined;
  private fdIno = -1;
  /** File size right after our last write: when unchanged, nobody else wrote since. */
  private knownEnd = -1;
  private queue: Pending[] = [];
  private flushing = false;
  private scheduled = false;
  private lastUse = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly fence: BusFence | undefined;

  constructor(
    readonly path: string,
    opts: BusWriterOptions,
    private readonly key: string,
  ) {
    this.fence = opts.fence;
    this.lockTimeoutMs = opts.lockTimeoutMs ?? 10_000;
    this.retries = Math.max(1, opts.retries ?? 3);
    this.fsync = opts.fsync ?? true;
    this.rotateAtBytes = opts.rotateAtBytes ?? 0;
    this.idleCloseMs = opts.idleCloseMs ?? 2000;
  }

  /** Appends one message; resolves with the stored message (generated msg_id and ts). */
  append(input: NewMessage, maxBodyBytes: number): Promise<BusMessage> {
    let prepared: { msg: BusMessage; entry: string };
    try {
      prepared = prepareMessage(input, maxBodyBytes);
    } catch (err) {
      return Promise.reject(err);
    }
    if (!sharedFiles.has(this.key)) sharedFiles.set(this.key, this);
    return new Promise<BusMessage>((resolve, reject) => {
      this.queue.push({ entry: prepared.entry, msg: prepared.msg, resolve, reject });
      if (!this.scheduled && !this.flushing) {
        this.scheduled = true;
        queueMicrotask(() => this.flush());
      }
    });
  }

  /** Closes the kept-open file descriptor (it is reopened on the next append). */
  close(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {
        // already closed
      }
    }
    this.fd = undefined;
    this.fdIno = -1;
    this.knownEnd = -1;
  }

  /** Writes queued entries; the common case (lock free) is fully synchronous. */
  private flush(): void {
    this.scheduled = false;
    while (this.queue.length > 0 && !this.flushing) {
      const batch = this.queue;
      this.queue = [];
      const entries = batch.map((p) => p.entry);
      let written: boolean;
      try {
        written = this.tryAppendNow(entries, batch[0].msg);
      } catch (err) {
        this.close();
        for (const p of batch) p.reject(err);
        continue;
      }
      if (written) {
        this.touch();
        notifyAppended(this.path, batch.map((p) => p.msg));
        for (const p of batch) p.resolve(p.msg);
        continue;
      }
      // Lock busy: wait for it without blocking the event loop; later appends queue up behind.
      this.flushing = true;
      this.appendWaiting(entries, batch[0].msg).then(
        () => {
          this.touch();
          notifyAppended(this.path, batch.map((p) => p.msg));
          for (const p of batch) p.resolve(p.msg);
        },
        (err: unknown) => {
          for (const p of batch) p.reject(err);
        },
      ).finally(() => {
        this.flushing = false;
        this.flush();
      });
    }
  }

  /** One attempt without waiting: false when another process holds the lock. */
  private tryAppendNow(entries: string[], context: BusMessage): boolean {
    for (let pass = 0; pass < 3; pass++) {
      const fenced = this.enterFence();
      if (fenced === false) return false;
      try {
        const locked = this.tryLockCurrentFile();
        if (!locked) return false;
        if (this.appendLocked(locked.fd, locked.size, entries, pass === 0, context)) return true;
      } finally {
        if (fenced !== true) this.fence!.leave(fenced);
      }
    }
    return false;
  }

  /**
   * The fence's shared lock and epoch check, taken before the bus lock and held until the write
   * is done (so a claim cannot slip between check and write): true without a fence, the fd to
   * leave() with one, false while a claim holds the fence lock. Throws StaleEpochError.
   */
  private enterFence(): number | boolean {
    if (!this.fence) return true;
    return this.fence.tryEnter() ?? false;
  }

  /** Upstream's algorithm: per attempt, poll the lock every 10 ms up to the timeout; retry timeouts with backoff. */
  private async appendWaiting(entries: string[], context: BusMessage): Promise<void> {
    let lastErr: unknown;
    for (let attempt = 0; attempt < this.retries; attempt++) {
      if (attempt > 0) await sleep(100 * 2 ** (attempt - 1));
      try {
        const deadline = Date.now() + this.lockTimeoutMs;
        for (let mayRotate = true; ; mayRotate = false) {
          let fenced = this.enterFence();
          let locked = fenced === false ? undefined : this.tryLockCurrentFile();
          while (!locked) {
            if (fenced !== true && fenced !== false) this.fence!.leave(fenced);
            if (Date.now() >= deadline) throw new BusError('LOCK_TIMEOUT', 'lock timeout');
            await sleep(LOCK_POLL_MS);
            fenced = this.enterFence();
            locked = fenced === false ? undefined : this.tryLockCurrentFile();
          }
          try {
            if (this.appendLocked(locked.fd, locked.size, entries, mayRotate, context)) return;
          } finally {
            if (fenced !== true && fenced !== false) this.fence!.leave(fenced);
          }
        }
      } catch (err) {
        if (!(err instanceof BusError && err.code === 'LOCK_TIMEOUT')) {
          this.close();
          throw err;
        }
        lastErr = err;
      }
    }
    throw new BusError('LOCK_TIMEOUT', `append failed after ${this.retries} attempts: lock message bus: ${(lastErr as Error).message}`);
  }

  /**
   * Appends under the lock already held on `fd` and releases it. Returns false (nothing written)
   * when it rotated the file instead; the caller then locks the fresh file and appends there.
   */
  private appendLocked(fd: number, size: number, entries: string[], mayRotate: boolean, context: BusMessage): boolean {
    let rotated = false;
    try {
      if (mayRotate && this.rotateAtBytes > 0 && size >= this.rotateAtBytes) {
        try {
          renameSync(this.path, archivePath(this.path));
        } catch (err) {
          throw ioError('rotate', this.path, err);
        }
        rotated = true;
      } else {
        // A writer may have died mid-entry: cut its torn record off (all-or-nothing), or, when the
        // tail cannot be attributed to a record, end it so that ours is not swallowed.
        // Foreign bytes (not a torn entry of ours) are never cut: they are quarantined and ended.
        let start = size;
        let prefix = '';
        if (size !== this.knownEnd && endsTorn(fd, size)) {
          const foreign = findForeignTail(fd, size, this.path);
          const cut = foreign ? undefined : tornEntryStart(fd, size, this.path);
          if (foreign) prefix = quarantineForeignTail(fd, size, this.path, foreign, (body, after) => errorEntry(body, after ?? context)).lead;
          else if (cut === undefined) prefix = repairPrefix(fd, size, this.path);
          else start = truncateTo(fd, cut, this.path);
        }
        this.knownEnd = start + this.writeAll(fd, entries, start, prefix);
      }
    } finally {
      unflock(fd);
    }
    if (rotated) this.close();
    return !rotated;
  }

  private open(): number {
    checkBusPath(this.path);
    let fd: number;
    try {
      fd = openSync(this.path, OPEN_FLAGS, 0o644);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') throw new BusError('SYMLINK', `message bus path "${this.path}" is a symlink`);
      if (code === 'EISDIR') throw new BusError('NOT_REGULAR_FILE', `message bus path "${this.path}" is not a regular file`);
      throw ioError('open', this.path, err);
    }
    const st = fstatSync(fd);
    if (!st.isFile()) {
      closeSync(fd);
      throw new BusError('NOT_REGULAR_FILE', `message bus path "${this.path}" is not a regular file`);
    }
    this.fd = fd;
    this.fdIno = st.ino;
    return fd;
  }

  /**
   * Locks the file currently at `path` without waiting: { fd, size } or undefined when another
   * holder has the lock. A file replaced (rotated, deleted) while we kept it open is closed and the
   * current one opened instead.
   */
  private tryLockCurrentFile(): { fd: number; size: number } | undefined {
    for (;;) {
      const fd = this.fd ?? this.open();
      if (!tryFlock(fd, 'ex')) return undefined;
      const st = checkBusPath(this.path);
      if (st && st.ino === this.fdIno) return { fd, size: st.size };
      unflock(fd);
      this.close();
    }
  }

  /**
   * Writes the entries (with separators) in one write (and one fsync); returns the number of bytes
   * written. All or nothing: on any error the file is truncated back to `size` (we still hold the
   * lock) and the error reported, so a failed append (ENOSPC, EIO) leaves no torn entry behind. An
   * append to an empty file also fsyncs the folder (the file may be new); when that fails the
   * entry is taken back the same way.
   */
  private writeAll(fd: number, entries: string[], size: number, prefix: string): number {
    const text = prefix + (size > 0 ? '\n' : '') + entries.join('\n');
    let written: number;
    try {
      written = appendAllOrNothing(fd, Buffer.from(text), size, { fsync: this.fsync });
    } catch (err) {
      this.knownEnd = -1;
      throw ioError('write', this.path, err);
    }
    if (size === 0 && this.fsync) {
      try {
        fsyncDir(dirname(resolvePath(this.path)));
      } catch (err) {
        this.knownEnd = -1;
        truncateTo(fd, size, this.path);
        throw ioError('fsync folder of', this.path, (err as Error & { cause?: unknown }).cause ?? err);
      }
    }
    return written;
  }

  private touch(): void {
    this.lastUse = Date.now();
    if (this.idleTimer || this.fd === undefined) return;
    const check = () => {
      const idle = Date.now() - this.lastUse;
      if (idle >= this.idleCloseMs) {
        this.idleTimer = undefined;
        if (!this.flushing && this.queue.length === 0) {
          this.close();
          if (sharedFiles.get(this.key) === this) sharedFiles.delete(this.key);
        }
        return;
      }
      this.idleTimer = setTimeout(check, this.idleCloseMs - idle);
      this.idleTimer.unref();
    };
    this.idleTimer = setTimeout(check, this.idleCloseMs);
    this.idleTimer.unref();
  }
}
