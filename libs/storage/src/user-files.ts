import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Files a user names on the command line (prompt files, specs, TODO lists, `--out` targets) and
 * plain existence checks: the filesystem calls of the CLI commands live here, so the commands
 * translate flags and print (issue #14, test/arch "thin entrances").
 */

export function pathExists(path: string): boolean {
  return existsSync(path);
}

/** The file's modification time in ms, or undefined when it does not exist. */
export function fileMtimeMs(path: string): number | undefined {
  return statSync(path, { throwIfNoEntry: false })?.mtimeMs;
}

/** The UTF-8 text of a file; the fs error (ENOENT, EISDIR, …) propagates for the caller to word. */
export function readUserFile(path: string): string {
  return readFileSync(path, 'utf8');
}

/** Writes `text` to `path`, creating its folder first when `mkdirs` is set. */
export function writeUserFile(path: string, text: string, opts: { mkdirs?: boolean } = {}): void {
  if (opts.mkdirs) mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** `mkdir -p`. */
export function ensureDir(path: string): void {
  mkdirSync(path, { recursive: true });
}
