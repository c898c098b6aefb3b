import { lstatSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { BUS_FILE_NAMES } from './types';

/**
 * Walks from `from` up to the filesystem root; in each folder the first regular file (symlinks
 * skipped) among TASK-MESSAGE-BUS.md, PROJECT-MESSAGE-BUS.md, MESSAGE-BUS.md wins.
 */
export function discoverBus(from: string): string | undefined {
  let dir = resolve(from);
  for (;;) {
    for (const name of BUS_FILE_NAMES) {
      const candidate = join(dir, name);
      try {
        if (lstatSync(candidate).isFile()) return candidate;
      } catch {
        // missing or unreadable: try the next name
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
