import { isIdentifier, StorageError, validateIdentifier, validateRunId } from '@app/storage';
import { ApiError } from './api-error';

/** api.md §3.4 identifier rule; any failure → 400 with the storage message. Returns the trimmed id. */
export function checkId(value: string | undefined, name: string): string {
  try {
    return validateIdentifier(value ?? '', name);
  } catch (err) {
    if (err instanceof StorageError) throw new ApiError('BAD_REQUEST', err.message);
    throw err;
  }
}

/** Run ids: the identifier rule plus no glob metacharacters (D18). */
export function checkRunId(value: string | undefined): string {
  const id = checkId(value, 'run_id');
  try {
    return validateRunId(id);
  } catch (err) {
    if (err instanceof StorageError) throw new ApiError('BAD_REQUEST', err.message);
    throw err;
  }
}

export function checkOptionalId(value: string | undefined, name: string): string | undefined {
  return value === undefined || value === '' ? undefined : checkId(value, name);
}

/** True when `value` is an identifier exactly as given (list cursors are ids the list handed out). */
export const isId = isIdentifier;

/** True when `value` is a run id exactly as given. */
export function isRunId(value: string): boolean {
  try {
    return isId(value) && validateRunId(value) === value;
  } catch {
    return false;
  }
}

/** True for `<project>/<task>` of two identifiers (the key of task lists). */
export function isTaskKey(value: string): boolean {
  const slash = value.indexOf('/');
  return slash > 0 && isId(value.slice(0, slash)) && isId(value.slice(slash + 1));
}
