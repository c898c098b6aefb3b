import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BusCursor, BusMessage, type BusWriters, readMessages } from '@app/messagebus';
import { writeFileAtomic } from '@app/storage';
import { RunnerError } from '../runner.errors';
import { sleep } from '../sleep';

/** Bus types that open a question; an ANSWER whose `parents` names the question's msg_id closes it. */
export const QUESTION_TYPES: readonly string[] = ['QUESTION', 'BLOCKED'];
export const ANSWER_TYPE = 'ANSWER';
/** Task state file: present while the task waits for input (a cheap index; the bus is the truth). */
export const NEEDS_INPUT_FILE = 'NEEDS-INPUT.json';

export interface OpenQuestion {
  msg_id: string;
  type: string;
  ts: Date;
  project_id: string;
  task_id: string;
  run_id: string;
  body: string;
}

function answeredIds(messages: BusMessage[]): Set<string> {
  const ids = new Set<string>();
  for (const m of messages) if (m.type === ANSWER_TYPE) for (const p of m.parents ?? []) ids.add(p.msg_id);
  return ids;
}

/** Meta key `askQuestion` sets: the message is a question to the task's owner even without a run id. */
export const ASK_META_KEY = 'needs_input';

/**
 * An agent's question: a QUESTION/BLOCKED posted by a run (it carries its run id) or through
 * askQuestion. A human's QUESTION to the agents (dashboard, API, `bus post` outside a run) does
 * not park the task.
 */
function isAgentQuestion(m: BusMessage): boolean {
  return QUESTION_TYPES.includes(m.type) && (m.run_id !== '' || m.meta?.[ASK_META_KEY] === 'true');
}

/** Agent questions without an ANSWER naming them as parent, oldest first. */
export function openQuestionsOf(messages: BusMessage[]): OpenQuestion[] {
  const answered = answeredIds(messages);
  return messages
    .filter((m) => isAgentQuestion(m) && !answered.has(m.msg_id))
    .map((m) => ({ msg_id: m.msg_id, type: m.type, ts: m.ts, project_id: m.project_id, task_id: m.task_id, run_id: m.run_id, body: m.body }));
}

export function readOpenQuestions(busPath: string): OpenQuestion[] {
  return existsSync(busPath) ? openQuestionsOf(readMessages(busPath)) : [];
}

/** Writes or removes <task>/NEEDS-INPUT.json to match the open questions. */
export function syncNeedsInputFile(taskDir: string, open: OpenQuestion[]): void {
  const path = join(taskDir, NEEDS_INPUT_FILE);
  if (open.length === 0) {
    rmSync(path, { force: true });
    return;
  }
  const state = { since: open[0].ts.toISOString(), questions: open.map((q) => ({ msg_id: q.msg_id, type: q.type, run_id: q.run_id, body: q.body })) };
  writeFileAtomic(path, `${JSON.stringify(state, null, 2)}\n`);
}

/**
 * The task's open questions when it is in the needs_input state: the state file is the index (no
 * bus read for tasks without it), the bus confirms (a stale file after a crash reads as no state).
 */
export function needsInputOf(taskDir: string, busPath: string): OpenQuestion[] {
  if (!existsSync(join(taskDir, NEEDS_INPUT_FILE))) return [];
  try {
    return readOpenQuestions(busPath);
  } catch {
    return [];
  }
}

export interface AskOptions {
  busPath: string;
  taskDir?: string;
  projectId: string;
  taskId: string;
  runId?: string;
  body: string;
  type?: 'QUESTION' | 'BLOCKED';
  /** The bus-writer factory of the composition root. */
  writers: BusWriters;
}

/** Posts a question (the task enters needs_input). */
export async function askQuestion(opts: AskOptions): Promise<BusMessage> {
  if (!opts.body.trim()) throw new RunnerError('INVALID_INPUT', 'question body is empty');
  mkdirSync(dirname(opts.busPath), { recursive: true });
  const writer = opts.writers(opts.busPath);
  try {
    const msg = await writer.append({
      type: opts.type ?? 'QUESTION',
      project_id: opts.projectId,
      task_id: opts.taskId,
      run_id: opts.runId ?? '',
      meta: { [ASK_META_KEY]: 'true' },
      body: opts.body,
    });
    if (opts.taskDir) syncNeedsInputFile(opts.taskDir, readOpenQuestions(opts.busPath));
    return msg;
  } finally {
    writer.close();
  }
}

export interface AnswerOptions {
  busPath: string;
  /** Opens the task bus (the composition root's factory). */
  writers: BusWriters;
  taskDir?: string;
  projectId: string;
  taskId: string;
  body: string;
  /** Answer only this question (default: every open question of the task). */
  questionId?: string;
  /** Extra header meta (scale-out marks a routed write with its id). */
  meta?: Record<string, string>;
}

/** Posts one ANSWER whose parents are the open questions answered; fails when none is open. */
export async function answerQuestion(opts: AnswerOptions): Promise<{ answer: BusMessage; questions: OpenQuestion[] }> {
  if (!opts.body.trim()) throw new RunnerError('INVALID_INPUT', 'answer body is empty');
  const open = readOpenQuestions(opts.busPath);
  const questions = opts.questionId ? open.filter((q) => q.msg_id === opts.questionId) : open;
  if (questions.length === 0) {
    throw new RunnerError('NOT_FOUND', opts.questionId ? `no open question ${opts.questionId} in task ${opts.taskId}` : `task ${opts.taskId} has no open question`);
  }
  const writer = opts.writers(opts.busPath);
  try {
    const answer = await writer.append({
      type: ANSWER_TYPE,
      project_id: opts.projectId,
      task_id: opts.taskId,
      run_id: '',
      parents: questions.map((q) => ({ msg_id: q.msg_id, kind: 'answers' })),
      meta: opts.meta,
      body: opts.body,
    });
    if (opts.taskDir) syncNeedsInputFile(opts.taskDir, readOpenQuestions(opts.busPath));
    return { answer, questions };
  } finally {
    writer.close();
  }
}

export interface WaitOptions {
  pollMs?: number;
  /** 0 or undefined: wait without limit. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Resolves with the first ANSWER naming `questionId` as parent (posted after it). */
export async function waitForAnswer(busPath: string, questionId: string, opts: WaitOptions = {}): Promise<BusMessage> {
  const pollMs = opts.pollMs ?? 200;
  const deadline = opts.timeoutMs ? Date.now() + opts.timeoutMs : Infinity;
  const cursor = new BusCursor(busPath, { sinceId: questionId });
  try {
    for (;;) {
      const found = cursor.readNew().find((m) => m.type === ANSWER_TYPE && m.parents?.some((p) => p.msg_id === questionId));
      if (found) return found;
      if (Date.now() >= deadline) throw new RunnerError('STOPPED', `no answer to ${questionId} within the wait budget`);
      if (!(await sleep(Math.min(pollMs, Math.max(1, deadline - Date.now())), opts.signal))) {
        throw new RunnerError('STOPPED', `waiting for an answer to ${questionId} was interrupted`);
      }
    }
  } finally {
    cursor.close();
  }
}
