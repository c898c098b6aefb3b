import * as fs from 'node:fs';
import * as path from 'node:path';
import { PACKAGE_NAME } from './candidate-package';

/** `YYYYMMDDhhmmss` in UTC, as upstream names its rollback copies. */
export function stamp(now = new Date()): string {
  return now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/** The folder holding package.json with name conductor-loop, from the built file location up. */
export function findInstallRoot(from = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    try {
      if (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).name === PACKAGE_NAME) return dir;
    } catch {
      // no (readable) package.json here: keep walking up
    }
    if (path.dirname(dir) === dir) throw new Error(`no ${PACKAGE_NAME} package.json above ${from}`);
  }
}

/** A source checkout is never replaced: it would throw away the working tree. */
export function checkReplaceable(root: string): void {
  if (fs.existsSync(path.join(root, '.git'))) throw new Error(`${root} is a git checkout; self-update replaces installed packages only`);
  fs.accessSync(path.dirname(root), fs.constants.W_OK);
}

/** A unique sibling of the install root (same filesystem, so renames are atomic). */
export function siblingPath(root: string, suffix: string): string {
  let candidate = `${root}.${suffix}`;
  for (let i = 1; fs.existsSync(candidate); i++) candidate = `${root}.${suffix}-${i}`;
  return candidate;
}

/**
 * Backs up the running package by renaming it aside, then renames the staged package into its
 * place. If the second rename fails the backup is put back.
 */
export function swapIn(root: string, staged: string, backup: string): void {
  fs.renameSync(root, backup);
  try {
    fs.renameSync(staged, root);
  } catch (err) {
    fs.renameSync(backup, root);
    throw err;
  }
}

/** Puts the backup back in place; the rejected package is kept beside it for inspection. */
export function restore(root: string, backup: string, now = new Date()): string {
  const rejected = siblingPath(root, `failed-${stamp(now)}`);
  if (fs.existsSync(root)) fs.renameSync(root, rejected);
  fs.renameSync(backup, root);
  return rejected;
}
