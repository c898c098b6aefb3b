import { chmodSync, closeSync, openSync, rmSync } from 'node:fs';
import { tryFlock } from './file-lock';

/** A Unix socket path this process owns: its flock on `<path>.lock` says so to every other process. */
export interface SocketClaim {
  /** Once listening: the socket is private (0600) and the start claim beside it (`<path>.starting`) is gone. */
  listening(): void;
  /** Gives the path up: the lock first, so a process that then finds no socket can claim it at once. */
  release(): void;
}

/**
 * Claims `path` for a server about to listen on it (the task supervisor): undefined when another
 * process owns it; else a crashed owner's socket file is removed (nobody answers on it).
 */
export function claimSocketPath(path: string): SocketClaim | undefined {
  const lockFd = openSync(`${path}.lock`, 'a', 0o600);
  if (!tryFlock(lockFd, 'ex')) {
    closeSync(lockFd);
    return undefined;
  }
  rmSync(path, { force: true });
  let released = false;
  return {
    listening() {
      chmodSync(path, 0o600);
      rmSync(`${path}.starting`, { force: true });
    },
    release() {
      if (released) return;
      released = true;
      closeSync(lockFd);
      rmSync(path, { force: true });
    },
  };
}
