import { readdirSync } from 'node:fs';

/** Sorted names of the run folders of a task; undefined when `runs/` does not exist. */
export function listRunNames(runsDir: string): string[] | undefined {
  try {
    return readdirSync(runsDir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
