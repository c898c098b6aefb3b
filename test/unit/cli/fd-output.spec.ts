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
  const drain = (): string => {
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
    return Buffer.concat(chunks).toString();
  };

  const recording = () => {
    const written: string[] = [];
    let opened = 0;
    const stream: TextOut = { write: (text: string) => written.push(text) };
    return { written, opened: () => opened, fallback: () => (opened++, stream) };
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
    const big = Array.from({ length: 40000 }, (_, i) => `${i}\n`).join(''); // ~230 KB, past a pipe's 64 KB
    out.write(big);
    out.write('after\n');
    const inPipe = drain();
    expect(inPipe.length).toBeGreaterThan(0);
    expect(inPipe.length).toBeLessThan(big.length);
    expect(r.opened()).toBe(1);
    expect(inPipe + r.written.join('')).toBe(`${big}after\n`);
  });

  it('reports any other write error, without the stream', () => {
    const closed = openSync(join(dir, 'closed'), 'w');
    closeSync(closed);
    const r = recording();
    expect(() => fdOutput(closed, r.fallback).write('x')).toThrow(/EBADF/);
    expect(r.opened()).toBe(0);
  });
});
