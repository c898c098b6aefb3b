import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isCancelled, readStopRequested, TASK_PROMPT_FILE } from '@app/storage';
import { RunnerError } from './runner.errors';

/** Task prompt (runner-agents.md §1.1 step 3): TASK.md is seeded once and never overwritten. */
export function resolveTaskPrompt(taskDir: string, explicit?: string): string {
  const given = explicit?.trim() ?? '';
  const path = join(taskDir, TASK_PROMPT_FILE);
  if (!existsSync(path)) {
    if (!given) throw new RunnerError('INVALID_INPUT', 'TASK.md not found and no prompt provided');
    return given;
  }
  if (given) return given;
  const text = readFileSync(path, 'utf8').trim();
  if (!text) throw new RunnerError('INVALID_INPUT', 'read TASK.md: file is empty');
  return text;
}

/**
 * Why the loop must stop now, or undefined: CANCELLED, a permanent STOP-REQUESTED, or one written
 * since the loop started (`loopStartMs`).
 */
export function taskStopReason(taskDir: string, loopStartMs: number): string | undefined {
  if (isCancelled(taskDir)) return 'task cancelled';
  const req = readStopRequested(taskDir);
  if (!req) return undefined;
  if (req.permanent) return 'stop requested (permanent)';
  // RFC3339 has whole seconds: a marker from the second the loop started counts.
  if (req.requestedAt && req.requestedAt.getTime() >= Math.floor(loopStartMs / 1000) * 1000) return 'stop requested';
  return undefined;
}
