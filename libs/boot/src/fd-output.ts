import { writeSync } from 'node:fs';

/** Where a command writes its output: process.stdout on the Nest path, fdStdout() on the hot path. */
export interface TextOut {
  write(text: string): unknown;
}

/**
 * Output by write(2) on `fd`. Should the descriptor be non-blocking and full (EAGAIN: a pipe its
 * reader has not drained), that write's rest and every later one go to `fallback()`, a stream that
 * waits for the reader, so the order holds.
 */
export function fdOutput(fd: number, fallback: () => TextOut): TextOut {
  let stream: TextOut | undefined;
  return {
    write(text: string): unknown {
      if (stream) return stream.write(text);
      const bytes = Buffer.from(text);
      let written = 0;
      try {
        while (written < bytes.length) written += writeSync(fd, bytes, written);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
        stream = fallback();
        return stream.write(bytes.subarray(written).toString());
      }
      return true;
    },
  };
}

/**
 * Standard output for the hot commands (apps/cli/src/fast): the first use of process.stdout loads
 * node:stream and node:net, ~5 ms of every command that prints (docs/decisions/startup-and-memory.md).
 */
export const fdStdout = (): TextOut => fdOutput(1, () => process.stdout);
