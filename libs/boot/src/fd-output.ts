import { writeSync } from 'node:fs';

/** Where a command writes its output: process.stdout on the Nest path, fdStdout() on the hot path. */
export interface TextOut {
  write(chunk: string | Uint8Array): unknown;
}

/**
 * Output by write(2) on `fd`. Should the descriptor be non-blocking and full (EAGAIN: a pipe its
 * reader has not drained), that write's rest and every later one go to `fallback()`, a stream that
 * waits for the reader, so the order holds. A reader that has gone (EPIPE: `run-agent output | head`)
 * ends the output quietly: what is left has nobody to read it.
 */
export function fdOutput(fd: number, fallback: () => TextOut): TextOut {
  let stream: TextOut | undefined;
  let readerGone = false;
  return {
    write(chunk: string | Uint8Array): unknown {
      if (readerGone) return false;
      if (stream) return stream.write(chunk);
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      let written = 0;
      try {
        while (written < bytes.length) written += writeSync(fd, bytes, written);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EPIPE') {
          readerGone = true;
          return false;
        }
        if (code !== 'EAGAIN') throw err;
        stream = fallback();
        // the rest as bytes: the cut may fall inside a character
        return stream.write(bytes.subarray(written));
      }
      return true;
    },
  };
}

let stdout: TextOut | undefined;

/**
 * Standard output for the hot commands (apps/cli/src/fast): the first use of process.stdout loads
 * node:stream and node:net, ~5 ms of every command that prints (docs/decisions/startup-and-memory.md).
 * One writer per process: whether descriptor 1 fell back to the stream, or lost its reader, is the
 * descriptor's state, not a caller's.
 */
export const fdStdout = (): TextOut => (stdout ??= fdOutput(1, () => process.stdout));
