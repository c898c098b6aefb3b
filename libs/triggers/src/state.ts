import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ScheduleRun } from '@app/contracts';
import { writeFileAtomic } from '@app/storage';

/** Where schedules and triggers keep their records: `<runs root>/.triggers/` (dot folders are not projects). */
export function triggersStateDir(root: string): string {
  return join(root, '.triggers');
}

export type { ScheduleRun };

export interface ScheduleRecord {
  schedule: string;
  /** The last slot handled (fired or skipped): no slot at or before it is fired again. */
  last_slot: string;
  history: ScheduleRun[];
}

export const HISTORY_LIMIT = 100;

export function scheduleRecordPath(root: string, name: string): string {
  return join(triggersStateDir(root), 'schedules', `${name}.json`);
}

/** The record, or undefined when none was written yet; a damaged record is that schedule's error. */
export function readScheduleRecord(root: string, name: string): ScheduleRecord | undefined {
  let text: string;
  try {
    text = readFileSync(scheduleRecordPath(root, name), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const rec = JSON.parse(text) as ScheduleRecord;
  if (typeof rec?.last_slot !== 'string' || !Array.isArray(rec.history)) throw new Error(`schedule record ${scheduleRecordPath(root, name)} is damaged`);
  return rec;
}

/** Atomic + fsync'd (storage's writeFileAtomic): a return means the record is on disk. */
export function writeScheduleRecord(root: string, rec: ScheduleRecord): void {
  const path = scheduleRecordPath(root, rec.schedule);
  mkdirSync(join(triggersStateDir(root), 'schedules'), { recursive: true });
  const history = rec.history.slice(-HISTORY_LIMIT);
  writeFileAtomic(path, `${JSON.stringify({ ...rec, history }, null, 2)}\n`);
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export function triggerDir(root: string, name: string): string {
  return join(triggersStateDir(root), 'triggers', name);
}

/** The token hash `run-agent trigger token` wrote, if any. */
export function readTokenHash(root: string, name: string): string | undefined {
  try {
    const v = readFileSync(join(triggerDir(root, name), 'token.sha256'), 'utf8').trim().toLowerCase();
    return /^[0-9a-f]{64}$/.test(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Replaces the trigger's token hash (rotation: the old token stops working at once). */
export function writeTokenHash(root: string, name: string, hash: string): string {
  const dir = triggerDir(root, name);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'token.sha256');
  writeFileAtomic(path, `${hash}\n`);
  return path;
}

export interface IdempotencyRecord {
  key: string;
  project_id: string;
  task_id: string;
  run_id?: string;
  status: string;
  created_at: string;
}

/** The trigger's idempotency records (pruned to a bounded window: prune.ts). */
export function idempotencyDir(root: string, name: string): string {
  return join(triggerDir(root, name), 'idempotency');
}

function idempotencyPath(root: string, name: string, key: string): string {
  return join(idempotencyDir(root, name), `${sha256Hex(key)}.json`);
}

export function readIdempotency(root: string, name: string, key: string): IdempotencyRecord | undefined {
  try {
    return JSON.parse(readFileSync(idempotencyPath(root, name, key), 'utf8')) as IdempotencyRecord;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export function writeIdempotency(root: string, name: string, rec: IdempotencyRecord): void {
  mkdirSync(join(triggerDir(root, name), 'idempotency'), { recursive: true });
  writeFileAtomic(idempotencyPath(root, name, rec.key), `${JSON.stringify(rec)}\n`);
}

/** Drops a key whose task was refused (nothing started): the caller may retry with it. */
export function removeIdempotency(root: string, name: string, key: string): void {
  rmSync(idempotencyPath(root, name, key), { force: true });
}
