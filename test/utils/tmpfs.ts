import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Tmpfs {
  dir: string;
  /** Grows (or shrinks) the mounted tmpfs, keeping its contents. */
  resize(size: string): void;
  release(): void;
}

/** Mounts a real tmpfs of `size` (needs root / CAP_SYS_ADMIN); returns why not as a string. */
export function mountTmpfs(size: string, prefix = 'tmpfs-'): Tmpfs | string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const res = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { encoding: 'utf8' });
  if (res.status !== 0) {
    rmdirSync(dir);
    return `cannot mount a tmpfs here (${(res.stderr || res.error?.message || 'mount failed').trim()})`;
  }
  return {
    dir,
    resize: (to: string) => {
      const r = spawnSync('mount', ['-o', `remount,size=${to}`, dir], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`remount ${dir}: ${r.stderr}`);
    },
    release: () => {
      spawnSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `it` when a tmpfs can be mounted here, else `it.skip` with a clear message on the console. */
export function itWithTmpfs(what: string): jest.It {
  const probe = mountTmpfs('64k');
  if (typeof probe === 'string') {
    console.warn(`SKIPPED ${what}: ${probe}`);
    return it.skip;
  }
  probe.release();
  return it;
}
