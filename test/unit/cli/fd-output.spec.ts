/**
 * The hot commands' standard output (libs/boot/src/fd-output.ts): write(2) on the descriptor, and
 * once a non-blocking pipe is full (EAGAIN), the rest through a stream, in order. A real FIFO.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fdOutput, type TextOut } from '@app/boot';

describe('fdOutput', () => {
  let dir: string;
  let fd: number;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fd-output-'));
    const fifo = join(dir, 'out');
    execFileSync('mkfifo', [fifo]);
    // read-write and non-blocking: opening does not wait for a reader, and a full pipe says EAGAIN
    fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
  });
  afterEach(() => {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Everything the pipe holds now. */
  const drain = (): string => drainBytes().toString();
  const drainBytes = (): Buffer => {
    const chunks: Buffer[] = [];
    const buf = Buffer.alloc(65536);
    for (;;) {
      try {
        const n = readSync(fd, buf);
        if (n === 0) break;
        chunks.push(Buffer.from(buf.subarray(0, n)));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') break;
        throw err;
      }
    }
    return Buffer.concat(chunks);
  };

  const recording = () => {
    const chunks: Buffer[] = [];
    let opened = 0;
    const stream: TextOut = { write: (chunk: string | Uint8Array) => chunks.push(Buffer.from(chunk)) };
    return { bytes: () => Buffer.concat(chunks), opened: () => opened, fallback: () => (opened++, stream) };
  };

  it('writes to the descriptor while it takes the bytes, without opening the stream', () => {
    const r = recording();
    const out = fdOutput(fd, r.fallback);
    out.write('first line\n');
    out.write('second line ✓\n');
    expect(drain()).toBe('first line\nsecond line ✓\n');
    expect(r.opened()).toBe(0);
  });

  it('on a full pipe hands the rest, and every later write, to the stream in order', () => {
    const r = recording();
    const out = fdOutput(fd, r.fallback);
    // ~300 KB, past a pipe's 64 KB: one byte, then two-byte characters, so a cut at an even
    // offset (a pipe takes whole pages) falls inside one
    const big = `a${'é'.repeat(150_000)}`;
    out.write(big);
    out.write('after\n');
    const inPipe = drainBytes();
    expect(inPipe.length).toBeGreaterThan(0);
    expect(inPipe.length).toBeLessThan(Buffer.byteLength(big));
    expect(r.opened()).toBe(1);
    expect(Buffer.concat([inPipe, r.bytes()]).toString()).toBe(`${big}after\n`);
  });

  it('ends quietly once the reader has gone (EPIPE), and writes nothing more', () => {
    const fifo = join(dir, 'gone');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY);
    closeSync(reader);
    const r = recording();
    const out = fdOutput(writer, r.fallback);
    expect(() => out.write('nobody reads this\n')).not.toThrow();
    expect(() => out.write('nor this\n')).not.toThrow();
    expect(r.opened()).toBe(0);
    closeSync(writer);
  });

  it('reports any other write error, without the stream', () => {
    const closed = openSync(join(dir, 'closed'), 'w');
    closeSync(closed);
    const r = recording();
    expect(() => fdOutput(closed, r.fallback).write('x')).toThrow(/EBADF/);
    expect(r.opened()).toBe(0);
  });
});
