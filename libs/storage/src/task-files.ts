import { existsSync, rmSync, statSync } from 'node:fs';
import { writeFileAtomic, writeFileDurable } from './atomic-write';
import { join } from 'node:path';
import { readRecordText } from './safe-read';
import { ioError, StorageError } from './storage.errors';
import { parseYaml } from './lazy-yaml';
import { yamlString } from './yaml-scalar';

export const TASK_PROMPT_FILE = 'TASK.md';
export const DONE_FILE = 'DONE';
export const TASK_CONFIG_FILE = 'TASK-CONFIG.yaml';
export const STOP_REQUESTED_FILE = 'STOP-REQUESTED';
export const CANCELLED_FILE = 'CANCELLED';

/** Go's time.RFC3339 in UTC (second precision). */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d+Z$/, 'Z');
}

function readIfExists(path: string): string | undefined {
  try {
    return readRecordText(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (err instanceof StorageError) throw err;
    throw ioError(`read ${path}`, err);
  }
}

/** TASK.md content (the prompt), or undefined when the file is absent. */
export function readTaskPrompt(taskDir: string): string | undefined {
  return readIfExists(join(taskDir, TASK_PROMPT_FILE));
}

/** Writes TASK.md = prompt + "\n" only when absent (§6.2). Returns true when written. */
export function writeTaskPromptIfAbsent(taskDir: string, prompt: string): boolean {
  try {
    writeFileDurable(join(taskDir, TASK_PROMPT_FILE), `${prompt}\n`, { flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw ioError(`write ${TASK_PROMPT_FILE}`, err);
  }
}

/** DONE exists (any content). A directory named DONE is an error, not a marker. */
export function isTaskDone(taskDir: string): boolean {
  const path = join(taskDir, DONE_FILE);
  try {
    if (statSync(path).isDirectory()) throw new StorageError('CONFLICT', `DONE marker is a directory: ${path}`);
    return true;
  } catch (err) {
    if (err instanceof StorageError) throw err;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return false;
    throw ioError(`stat ${path}`, err);
  }
}

/** Same as isTaskDone but never throws (a DONE directory or unreadable folder counts as not done). */
export function hasDoneFile(taskDir: string): boolean {
  try {
    return isTaskDone(taskDir);
  } catch {
    return false;
  }
}

/** DONE, durably (file and folder fsync'd before returning: issue #31). */
export function writeDone(taskDir: string): void {
  try {
    writeFileDurable(join(taskDir, DONE_FILE), '');
  } catch (err) {
    throw ioError('write DONE', err);
  }
}

/** Removes DONE; true when a file was removed. */
export function removeDone(taskDir: string): boolean {
  const path = join(taskDir, DONE_FILE);
  if (!existsSync(path)) return false;
  if (statSync(path).isDirectory()) throw new StorageError('CONFLICT', `DONE marker is a directory: ${path}`);
  rmSync(path, { force: true });
  return true;
}

/** Upstream taskdeps.Normalize: split on commas, trim, drop empties, reject escapes and self, de-duplicate. */
export function normalizeDependsOn(taskId: string, raw: string[]): string[] {
  const self = (taskId ?? '').trim();
  const out: string[] = [];
  for (const value of raw) {
    for (const part of String(value).split(',')) {
      const dep = part.trim();
      if (dep === '') continue;
      if (/[/\\]/.test(dep)) throw new StorageError('INVALID_ID', `dependency task id ${JSON.stringify(dep)} must not contain path separators`);
      if (dep.includes('..')) throw new StorageError('INVALID_ID', `dependency task id ${JSON.stringify(dep)} must not contain ..`);
      if (self !== '' && dep === self) throw new StorageError('INVALID_ID', `task ${JSON.stringify(self)} cannot depend on itself`);
      if (!out.includes(dep)) out.push(dep);
    }
  }
  return out;
}

/** depends_on of TASK-CONFIG.yaml, normalised; [] when the file is absent. */
export function readDependsOn(taskDir: string): string[] {
  const path = join(taskDir, TASK_CONFIG_FILE);
  const text = readIfExists(path);
  if (text === undefined) return [];
  let doc: unknown;
  try {
    doc = parseYaml(text, { schema: 'core' });
  } catch (err) {
    throw new StorageError('IO', `unmarshal task config ${path}: ${(err as Error).message.split('\n')[0]}`);
  }
  const deps = doc && typeof doc === 'object' ? (doc as { depends_on?: unknown }).depends_on : undefined;
  if (deps === undefined || deps === null) return [];
  if (!Array.isArray(deps)) throw new StorageError('IO', `unmarshal task config ${path}: depends_on must be a list`);
  return normalizeDependsOn('', deps.map((d) => String(d)));
}

/** Writes TASK-CONFIG.yaml (yaml.v3 layout); an empty list deletes the file. */
export function writeDependsOn(taskDir: string, deps: string[]): void {
  const path = join(taskDir, TASK_CONFIG_FILE);
  try {
    if (deps.length === 0) {
      rmSync(path, { force: true });
      return;
    }
    writeFileAtomic(path, `depends_on:\n${deps.map((d) => `    - ${yamlString(d, '      ')}\n`).join('')}`);
  } catch (err) {
    throw ioError('write task config', err);
  }
}

export interface StopRequest {
  permanent: boolean;
  /** When the (non-permanent) request was written; undefined if unparsable. */
  requestedAt?: Date;
}

/** STOP-REQUESTED: `permanent\n`, or the current UTC RFC3339 time + "\n". */
export function writeStopRequested(taskDir: string, permanent: boolean, now: Date = new Date()): void {
  try {
    writeFileAtomic(join(taskDir, STOP_REQUESTED_FILE), `${permanent ? 'permanent' : rfc3339(now)}\n`);
  } catch (err) {
    throw ioError('write stop-request marker', err);
  }
}

export function readStopRequested(taskDir: string): StopRequest | undefined {
  const text = readIfExists(join(taskDir, STOP_REQUESTED_FILE));
  if (text === undefined) return undefined;
  const value = text.trim();
  if (value === 'permanent') return { permanent: true };
  const at = new Date(value);
  return { permanent: false, requestedAt: Number.isNaN(at.getTime()) ? undefined : at };
}

export function removeStopRequested(taskDir: string): void {
  rmSync(join(taskDir, STOP_REQUESTED_FILE), { force: true });
}

/**
 * Clears the markers that end a loop (STOP-REQUESTED, CANCELLED), so an explicit resume runs again.
 * Without it a stop marker written in the same second as the resume stops the new loop at once.
 */
export function clearStopMarkers(taskDir: string): void {
  removeStopRequested(taskDir);
  rmSync(join(taskDir, CANCELLED_FILE), { force: true });
}

/** CANCELLED: `cancelled_at: <RFC3339 UTC>\nreason: <text>\n` (informational). */
export function writeCancelled(taskDir: string, reason: string, now: Date = new Date()): void {
  try {
    writeFileAtomic(join(taskDir, CANCELLED_FILE), `cancelled_at: ${rfc3339(now)}\nreason: ${reason}\n`);
  } catch (err) {
    throw ioError('write CANCELLED', err);
  }
}

export function isCancelled(taskDir: string): boolean {
  return existsSync(join(taskDir, CANCELLED_FILE));
}
