import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** A port the kernel reports free right now (bound and released on 127.0.0.1). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function portsDir(commonDir: string): string {
  return join(commonDir, 'conductor', 'ports');
}

/**
 * Reserves a free port for a task in the repository's registry (`<git-dir>/conductor/ports/<port>`,
 * created exclusively), so parallel tasks of one repository never get the same `JRUN_PORT`.
 * A task that already holds a reservation gets it back.
 */
export async function reservePort(commonDir: string, taskId: string): Promise<number> {
  const dir = portsDir(commonDir);
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const held = findReservation(commonDir, taskId);
  if (held) return held;
  for (let i = 0; i < 20; i++) {
    const port = await freePort();
    try {
      writeFileSync(join(dir, String(port)), `${taskId}\n`, { flag: 'wx', mode: 0o644 });
      return port;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  throw new Error('could not reserve a free port');
}

function findReservation(commonDir: string, taskId: string): number | undefined {
  const dir = portsDir(commonDir);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(join(dir, name), 'utf8').trim() === taskId) return Number(name);
    } catch {
      // released meanwhile
    }
  }
  return undefined;
}

export function releasePort(commonDir: string, taskId: string): void {
  const port = findReservation(commonDir, taskId);
  if (port) rmSync(join(portsDir(commonDir), String(port)), { force: true });
}
