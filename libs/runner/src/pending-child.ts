/**
 * "A child registers before it is slow" (issue #11). `run-agent job` with a parent run writes a
 * marker `<parent run folder>/pending-children/<pid>` as the very first thing it does (from
 * apps/cli/src/main.ts, before NestJS loads), and removes it once its own run folder holds a
 * run-info.yaml (or when the process exits). The parent's child wait treats a marker whose process
 * lives as a child; a marker whose process died without creating a run is removed, never waited
 * for. Plain module (node:fs only): the CLI entry deep-imports it.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

export const PENDING_CHILDREN_DIR = 'pending-children';

let marker: string | undefined;

/** Value of `--parent-run-id X` / `--parent-run-id=X` in argv, else $JRUN_ID. */
function parentRunIdFrom(argv: string[], env: NodeJS.ProcessEnv): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--parent-run-id') return argv[i + 1];
    if (argv[i].startsWith('--parent-run-id=')) return argv[i].slice('--parent-run-id='.length);
  }
  return env.JRUN_ID;
}

/**
 * Called first by the CLI entry: for `run-agent job` whose parent run is the run folder named by
 * $JRUN_RUN_FOLDER (an agent starting a sub-agent), writes the pending marker. Never throws.
 */
export function registerPendingChild(argv: string[], env: NodeJS.ProcessEnv = process.env): string | undefined {
  const path = writePendingMarker(argv, env, process.pid);
  if (path) {
    marker = path;
    process.once('exit', () => clearPendingChild());
  }
  return path;
}

/**
 * The marker of a `job` (argv, env) running on behalf of process `pid` (the task supervisor writes
 * its client's: the client lives as long as the job). Returns its path, or undefined when the job
 * has no parent run or the marker cannot be written. Never throws.
 */
export function writePendingMarker(argv: string[], env: NodeJS.ProcessEnv, pid: number): string | undefined {
  if (argv[0] !== 'job' || argv.includes('--help') || argv.includes('-h')) return undefined;
  const folder = env.JRUN_RUN_FOLDER;
  const parent = parentRunIdFrom(argv, env)?.trim();
  if (!folder || !parent || basename(folder) !== parent) return undefined;
  try {
    const dir = join(folder, PENDING_CHILDREN_DIR);
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    const path = join(dir, String(pid));
    writeFileSync(path, `${pid}\n`, { mode: 0o644 });
    return path;
  } catch {
    return undefined;
  }
}

/** The run now exists (or the job ends): the marker has done its job. Without a path, this process's own marker. */
export function clearPendingChild(path?: string): void {
  if (path) return void rmSync(path, { force: true });
  if (!marker) return;
  rmSync(marker, { force: true });
  marker = undefined;
}

/** Pids of pending children registered under the given run folders. */
export function pendingChildPids(runDirs: string[]): { pid: number; path: string }[] {
  const out: { pid: number; path: string }[] = [];
  for (const dir of runDirs) {
    let names: string[];
    try {
      names = readdirSync(join(dir, PENDING_CHILDREN_DIR));
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = Number(name);
      if (Number.isInteger(pid) && pid > 0) out.push({ pid, path: join(dir, PENDING_CHILDREN_DIR, name) });
    }
  }
  return out;
}
