import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { RUN_INFO_FILE, RUNS_DIR_NAME } from './layout';
import type { RunInfo } from './run-info';

/**
 * The file names of a run folder and a task folder (cli-storage.md §3.1), in one place: code that
 * holds a folder path (not ids) builds file paths through these helpers instead of typing names.
 * Kept free of the YAML parser: the `bus post` fast path imports this file.
 */
export const RUN_OUTPUT_FILE = 'output.md';
export const RUN_STDOUT_FILE = 'agent-stdout.txt';
export const RUN_STDERR_FILE = 'agent-stderr.txt';
export const RUN_PROMPT_FILE = 'prompt.md';

/** `<runDir>/run-info.yaml`. */
export function runInfoFile(runDir: string): string {
  return join(runDir, RUN_INFO_FILE);
}

/** `<runDir>/output.md`. */
export function runOutputFile(runDir: string): string {
  return join(runDir, RUN_OUTPUT_FILE);
}

/** The nearest folder at or above `cwd` holding a run-info.yaml, or undefined. */
export function runFolderAbove(cwd: string): string | undefined {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    if (existsSync(runInfoFile(dir))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/** `<taskDir>/runs`. */
export function taskRunsDir(taskDir: string): string {
  return join(taskDir, RUNS_DIR_NAME);
}

/** `<runsDir>/<runId>/run-info.yaml` for a task's `runs` folder and a run folder name. */
export function runInfoIn(runsDir: string, runId: string): string {
  return join(runsDir, runId, RUN_INFO_FILE);
}

/** The four file paths a run records in run-info.yaml. */
export function runFilePaths(runDir: string): Required<Pick<RunInfo, 'prompt_path' | 'output_path' | 'stdout_path' | 'stderr_path'>> {
  return {
    prompt_path: join(runDir, RUN_PROMPT_FILE),
    output_path: join(runDir, RUN_OUTPUT_FILE),
    stdout_path: join(runDir, RUN_STDOUT_FILE),
    stderr_path: join(runDir, RUN_STDERR_FILE),
  };
}

/** Names of the sub-folders of `dir`, sorted (run ids sort by time); undefined when `dir` does not exist. */
export function listFolderNames(dir: string): string[] | undefined {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Bytes under `path` (files and symlinks themselves, not their targets); 0 when it is gone. */
export function folderSize(path: string): number {
  let total = 0;
  let entries;
  try {
    entries = readdirSync(path, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const full = join(path, e.name);
    if (e.isDirectory()) total += folderSize(full);
    else {
      try {
        total += lstatSync(full).size;
      } catch {
        // vanished meanwhile
      }
    }
  }
  return total;
}
