import { existsSync } from 'node:fs';
import { BusMessage, readMessages } from '@app/messagebus';
import { ANSWER_TYPE } from './questions';

/** Meta key of a message that woke a finished task (`resume: true`); its body goes into the next prompt. */
export const RESUME_META_KEY = 'resume';
const ATTEMPT_START = /^starting root agent \(restart #\d+\)$/;
/**
 * Outcomes the merge queue posts on the task bus (@app/worktree, merge.ts): what a task is usually woken
 * to fix, so they head the next prompt like a waking message does.
 */
export const MERGE_OUTCOME_TYPES: readonly string[] = ['MERGE_CONFLICT', 'MERGE_FAILED'];

function isAttemptStart(m: BusMessage): boolean {
  return m.type === 'INFO' && m.run_id === '' && ATTEMPT_START.test(m.body);
}

/**
 * The input that arrived since the last attempt started (the loop posts "starting root agent" at
 * each start): every ANSWER with the question(s) it answers, every waking (`resume`) message and
 * every merge outcome (MERGE_CONFLICT / MERGE_FAILED, the usual reason to wake a finished task),
 * formatted as a block for the head of the next run's prompt; '' when there is none.
 * Derived from the bus alone, so a loop restarted after a crash builds the same block.
 */
export function inputContextOf(messages: BusMessage[]): string {
  let start = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (isAttemptStart(messages[i])) {
      start = i;
      break;
    }
  }
  const byId = new Map(messages.map((m) => [m.msg_id, m]));
  const parts: string[] = [];
  for (const m of messages.slice(start + 1)) {
    if (m.type === ANSWER_TYPE) {
      const questions = (m.parents ?? []).map((p) => byId.get(p.msg_id)).filter((q): q is BusMessage => q !== undefined);
      for (const q of questions) parts.push(`Question (${q.type} ${q.msg_id}):\n${q.body.trim()}`);
      parts.push(`Answer (${m.msg_id}):\n${m.body.trim()}`);
    } else if (m.meta?.[RESUME_META_KEY] === 'true' || MERGE_OUTCOME_TYPES.includes(m.type)) {
      parts.push(`New message (${m.type} ${m.msg_id}):\n${m.body.trim()}`);
    }
  }
  if (parts.length === 0) return '';
  return `## New input since your last run\n\n${parts.join('\n\n')}\n\n## Task\n\n`;
}

export function readInputContext(busPath: string): string {
  return existsSync(busPath) ? inputContextOf(readMessages(busPath)) : '';
}
