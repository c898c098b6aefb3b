import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

const PROGRAM_NAMES = new Set(['run-agent', 'conductor']);

/**
 * The directory holding the `run-agent` executable, which agents get on their PATH so that
 * `run-agent bus post` works inside a run. Prefers the script this process was started as;
 * otherwise walks up from this module to the package's `bin/` folder.
 */
export function runAgentBinDir(argv1: string | undefined = process.argv[1]): string | undefined {
  // argv[1] may also be a bare program name (CLI frameworks rewrite it): only trust a real path.
  if (argv1 && PROGRAM_NAMES.has(basename(argv1))) {
    const dir = dirname(resolve(argv1));
    if (existsSync(join(dir, 'run-agent'))) return dir;
  }
  let dir = __dirname;
  for (;;) {
    if (existsSync(join(dir, 'bin', 'run-agent'))) return join(dir, 'bin');
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
