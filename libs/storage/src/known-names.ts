import { statSync } from 'node:fs';
import leven from 'leven';
import type { RunsLayout } from './layout';
import { listFolderNames } from './run-files';
import { StorageError } from './storage.errors';

/**
 * Names the user gives that must exist (a project, a task, an agent, a status value): an unknown
 * one is refused with one line naming the closest existing name ("did you mean"). The API answers
 * 404 for the same NOT_FOUND code and the CLI exits 2 (apps/cli/src/common/cli-errors.ts).
 * Kept free of the YAML parser: the `bus read` fast path imports this file.
 */

const isDirectory = (path: string): boolean => statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;

/** The candidate closest to `input` by edit distance (case-insensitive), when it is close enough to be a typo. */
export function closestName(input: string, candidates: Iterable<string>): string | undefined {
  const wanted = input.trim().toLowerCase();
  if (!wanted) return undefined;
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = leven(wanted, name.toLowerCase());
    if (distance === 0) return name;
    if (!best || distance < best.distance) best = { name, distance };
  }
  // at most 3 edits, and fewer than half the name (so "ab" never suggests "cd")
  return best && best.distance <= 3 && best.distance * 2 < Math.max(wanted.length, best.name.length) ? best.name : undefined;
}

/** ` (did you mean "x"?)`, or '' when nothing is close. */
export function didYouMean(input: string, candidates: Iterable<string>): string {
  const close = closestName(input, candidates);
  return close === undefined ? '' : ` (did you mean ${JSON.stringify(close)}?)`;
}

/** `unknown <kind> "<name>"<where> (did you mean …?)` as a NOT_FOUND StorageError. */
export function unknownName(kind: string, name: string, candidates: Iterable<string>, where = ''): StorageError {
  return new StorageError('NOT_FOUND', `unknown ${kind} ${JSON.stringify(name)}${where}${didYouMean(name, candidates)}`);
}

/** The project's folder; an unknown project is a NOT_FOUND error naming the closest project. */
export function existingProjectDir(layout: RunsLayout, projectId: string): string {
  const dir = layout.projectDir(projectId);
  if (isDirectory(dir)) return dir;
  throw unknownName('project', projectId, listFolderNames(layout.root) ?? [], ` in runs root ${layout.root}`);
}

/** The task's folder; an unknown project or task is a NOT_FOUND error naming the closest one. */
export function existingTaskDir(layout: RunsLayout, projectId: string, taskId: string): string {
  const dir = layout.taskDir(projectId, taskId);
  if (isDirectory(dir)) return dir;
  const projectDir = existingProjectDir(layout, projectId);
  throw unknownName('task', taskId, listFolderNames(projectDir) ?? [], ` in project ${JSON.stringify(projectId)}`);
}

/** The one line refusing a flag value that must be one of `allowed` (the caller throws it as its usage error). */
export function invalidChoice(flag: string, value: string, allowed: readonly string[]): string {
  return `invalid ${flag} ${JSON.stringify(value)}${didYouMean(value, allowed)}: must be one of ${allowed.join(', ')}`;
}
