import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '@app/storage';
import type { TaskWriteResult } from './task-writes';

/**
 * The routed writes a worker applied to a task (docs/scale-out.md "Task writes"): a write sent
 * again under the same write id (a re-send after a lost answer, a redelivery after a worker
 * restart, a re-send to the host that took the task over) is answered with the recorded result
 * and applied nothing. It lives in the task's folder, so it is replicated like every task file
 * and a takeover's replay brings it to the new owner.
 */
export const APPLIED_WRITES_FILE = 'APPLIED-WRITES.json';
/** The newest this many are kept (a re-send comes within CONDUCTOR_CONTROL's 1 h). */
const KEEP = 500;

interface Applied {
  id: string;
  op: string;
  result: TaskWriteResult;
}

function read(taskDir: string): Applied[] {
  const file = join(taskDir, APPLIED_WRITES_FILE);
  if (!existsSync(file)) return [];
  try {
    const o = JSON.parse(readFileSync(file, 'utf8')) as { writes?: unknown };
    return Array.isArray(o.writes) ? (o.writes as Applied[]).filter((w) => w && typeof w.id === 'string' && typeof w.op === 'string') : [];
  } catch {
    // a broken record file forgets the ids it held (those writes could apply again); it is rewritten whole next time
    return [];
  }
}

/** The recorded result of a write applied earlier under this id, if any. */
export function appliedResult(taskDir: string, writeId: string): TaskWriteResult | undefined {
  return read(taskDir).find((w) => w.id === writeId)?.result;
}

/** Records an applied write (fsync'd before the worker answers it). */
export function recordApplied(taskDir: string, writeId: string, op: string, result: TaskWriteResult): void {
  const writes = [...read(taskDir).filter((w) => w.id !== writeId), { id: writeId, op, result }].slice(-KEEP);
  writeFileAtomic(join(taskDir, APPLIED_WRITES_FILE), `${JSON.stringify({ writes }, null, 1)}\n`);
}
