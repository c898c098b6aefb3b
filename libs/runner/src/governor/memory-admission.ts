import { readFileSync } from 'node:fs';
import { formatByteSize } from '@app/storage';
import { sleep } from '../sleep';

/** Test/ops only: read MemAvailable from this meminfo-format file instead of /proc/meminfo. */
export const MEMINFO_PATH_ENV = 'CONDUCTOR_MEMINFO_PATH';
export const DEFAULT_MEMORY_POLL_MS = 1000;

/** MemAvailable in bytes from a /proc/meminfo-format file (`MemAvailable:  123456 kB`). */
export function readMemAvailable(path: string): number {
  const text = readFileSync(path, 'utf8');
  const m = /^MemAvailable:\s*(\d+)\s*kB\s*$/m.exec(text);
  if (!m) throw new Error(`no MemAvailable line in ${path}`);
  return Number(m[1]) * 1024;
}

export function meminfoPath(env: NodeJS.ProcessEnv = process.env): string {
  return env[MEMINFO_PATH_ENV] || '/proc/meminfo';
}

export interface MemoryAdmissionOptions {
  /** Bytes; undefined or 0 = no memory check. */
  floor?: number;
  signal?: AbortSignal;
  pollMs?: number;
  env?: NodeJS.ProcessEnv;
  post(type: string, body: string): Promise<void>;
  /** Called once when the run has to wait, with the reason (the bus line's text). */
  onWait?(reason: string): Promise<void>;
}

/**
 * Memory-aware admission (issue #33): returns once MemAvailable is at least `floor`. Below it the
 * run waits (one INFO "waiting for memory" on the bus, one when admitted), polling every `pollMs`.
 * Throws when aborted while waiting, or when MemAvailable cannot be read (a configured floor that
 * cannot be checked refuses the run: fail closed).
 */
export async function admitByMemory(opts: MemoryAdmissionOptions): Promise<void> {
  if (!opts.floor) return;
  const path = meminfoPath(opts.env);
  const available = (): number => {
    try {
      return readMemAvailable(path);
    } catch (err) {
      throw new Error(`min_available_memory is set but MemAvailable cannot be read: ${(err as Error).message}`);
    }
  };
  let now = available();
  if (now >= opts.floor) return;
  const reason = `waiting for memory: available ${formatByteSize(now)} < floor ${formatByteSize(opts.floor)} (defaults.min_available_memory)`;
  await opts.post('INFO', reason);
  await opts.onWait?.(reason);
  while (now < opts.floor) {
    if (!(await sleep(opts.pollMs ?? DEFAULT_MEMORY_POLL_MS, opts.signal))) {
      throw new Error(`stopped while waiting for memory: ${String(opts.signal?.reason ?? 'aborted')}`);
    }
    now = available();
  }
  await opts.post('INFO', `memory available: ${formatByteSize(now)} >= floor ${formatByteSize(opts.floor)}; starting`);
}
