import { randomInt } from 'node:crypto';
import { StorageError } from './storage.errors';

/** cli-storage.md §3.2: slug 3–50 chars of [a-z0-9-], alphanumeric at both ends. */
export const TASK_ID_PATTERN = /^task-\d{8}-\d{6}-[a-z0-9][a-z0-9-]{1,48}[a-z0-9]$/;
const PROJECT_ID_PATTERN = /^[a-z0-9][a-z0-9-]*[a-z0-9]$|^[a-z0-9]$/;
/** Run ids: anything that is a single safe path segment (legacy `run_…` ids included). */
const RUN_ID_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
const SLUG_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** Longest id accepted anywhere (a path segment): well under NAME_MAX (255) so `<id>.lock`-style names still fit. */
export const MAX_ID_LENGTH = 128;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** The length check shared by every id rule (the charset rules refuse control characters); `label` names the id. */
function checkIdLength(id: string, label: string): void {
  if (id.length > MAX_ID_LENGTH) throw new StorageError('INVALID_ID', `${label} is ${id.length} characters long, over the ${MAX_ID_LENGTH}-character limit`);
}

function quote(value: string): string {
  return JSON.stringify(value);
}

export function validateProjectId(id: string): string {
  if (typeof id !== 'string' || id.trim() === '') throw new StorageError('INVALID_ID', 'project ID is empty');
  checkIdLength(id, 'project ID');
  const bad = (why: string) => new StorageError('INVALID_ID', `invalid project ID ${quote(id)}: ${why}`);
  if (/[/\\]/.test(id)) throw bad('must not contain path separators (projects cannot be nested)');
  if (id === '.' || id === '..') throw bad('must not be a relative path reference');
  if (id.includes('\0')) throw bad('must not contain null bytes');
  if (!PROJECT_ID_PATTERN.test(id)) throw bad('must contain only lowercase letters, digits, and hyphens (e.g. my-project)');
  return id;
}

export function validateTaskId(id: string): string {
  if (typeof id === 'string') checkIdLength(id, 'task ID');
  if (typeof id !== 'string' || !TASK_ID_PATTERN.test(id)) {
    throw new StorageError(
      'INVALID_ID',
      `invalid task ID ${quote(String(id))}: must match task-<YYYYMMDD>-<HHMMSS>-<slug>, the slug 3-50 characters of a-z, 0-9 and '-', starting and ending with a letter or digit (e.g. task-20260220-153045-my-feature)`,
    );
  }
  return id;
}

/** D18: a run id must be one path segment: no separators, no `..`, no glob metacharacters. */
export function validateRunId(id: string): string {
  if (typeof id !== 'string' || id.trim() === '') throw new StorageError('INVALID_ID', 'run ID is empty');
  checkIdLength(id, 'run ID');
  if (id.includes('..') || !RUN_ID_PATTERN.test(id)) {
    throw new StorageError('INVALID_ID', `invalid run ID ${quote(id)}: must be a single folder name without path separators, "..", or glob characters`);
  }
  return id;
}

/** The API identifier rule (api.md §3.4): trimmed, non-empty, no separators, no `..`. */
export function validateIdentifier(value: string, name: string): string {
  const trimmed = typeof value === 'string' ? value.trim() : '';
  if (trimmed === '') throw new StorageError('INVALID_ID', `${name} is required`);
  checkIdLength(trimmed, name);
  let decoded = trimmed;
  try {
    decoded = decodeURIComponent(trimmed);
  } catch {
    // not percent-encoded: keep as is
  }
  for (const v of [trimmed, decoded]) {
    if (/[/\\]/.test(v)) throw new StorageError('INVALID_ID', `${name} must not contain path separators`);
    if (v.includes('..')) throw new StorageError('INVALID_ID', `${name} must not contain ..`);
    if (v.includes('\0')) throw new StorageError('INVALID_ID', `${name} must not contain null bytes`);
  }
  // refused, not trimmed away: an id with a newline is an attempt, not a typo
  if (CONTROL_CHARS.test(value)) throw new StorageError('INVALID_ID', `${name} must not contain control characters`);
  return trimmed;
}

/** True when `value` passes the identifier rule exactly as given (list cursors are ids a list handed out). */
export function isIdentifier(value: string): boolean {
  try {
    return validateIdentifier(value, 'id') === value;
  } catch {
    return false;
  }
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** `YYYYMMDD-HHMMSS` in UTC. */
export function utcStamp(now: Date): string {
  return (
    `${now.getUTCFullYear()}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())}-` +
    `${pad(now.getUTCHours())}${pad(now.getUTCMinutes())}${pad(now.getUTCSeconds())}`
  );
}

export function randomSlug(length: number, alphabet = SLUG_CHARS): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/** `task-YYYYMMDD-HHMMSS-xxxxxx` (UTC, 6 random [a-z0-9]). */
export function generateTaskId(now: Date = new Date()): string {
  return `task-${utcStamp(now)}-${randomSlug(6)}`;
}

let runSeq = 0;

/** `YYYYMMDD-HHMMSS0000-<pid>-<seq>`: the `0000` is literal; seq is per process, from 1. */
export function newRunId(now: Date = new Date()): string {
  runSeq += 1;
  return `${utcStamp(now)}0000-${process.pid}-${runSeq}`;
}

/** Start time encoded in a run id (current and legacy `run_<YYYYMMDD-HHMMSS…>-<pid>` forms). */
export function runIdTime(runId: string): Date | undefined {
  const m = /^(?:run_)?(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})/.exec(runId);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m.map(Number);
  const t = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  return Number.isNaN(t.getTime()) ? undefined : t;
}
