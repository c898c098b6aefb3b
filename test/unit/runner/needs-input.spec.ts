import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BusMessage, createBusWriters, readMessages } from '@app/messagebus';
import { answerQuestion, askQuestion, inputContextOf, NEEDS_INPUT_FILE, needsInputOf, openQuestionsOf, scanOpenQuestions, waitForAnswer, wakeTask } from '@app/runner';
import { RunsLayout } from '@app/storage';

/** The bus-writer factory a composition root hands down. */
const writers = createBusWriters();

let n = 0;
function msg(type: string, body: string, extra: Partial<BusMessage> = {}): BusMessage {
  n++;
  return { msg_id: `MSG-${n}`, ts: new Date(Date.UTC(2026, 0, 1, 0, 0, n)), type, project_id: 'p', task_id: 't', run_id: '', body, ...extra };
}

describe('needs-input: open questions from the bus', () => {
  it('a QUESTION/BLOCKED is open until an ANSWER names it as parent; other parents do not close it', () => {
    const q1 = msg('QUESTION', 'a?', { run_id: 'run-1' });
    const q2 = msg('BLOCKED', 'need creds', { meta: { needs_input: 'true' } });
    // a human's QUESTION to the agents (no run id, not asked through askQuestion) parks nothing
    const human = msg('QUESTION', 'how is it going?');
    const other = msg('INFO', 'x', { parents: [{ msg_id: q1.msg_id }] });
    expect(openQuestionsOf([q1, human, q2, other]).map((q) => q.msg_id)).toEqual([q1.msg_id, q2.msg_id]);
    const a = msg('ANSWER', 'yes', { parents: [{ msg_id: q1.msg_id }] });
    expect(openQuestionsOf([q1, q2, other, a]).map((q) => q.msg_id)).toEqual([q2.msg_id]);
    const both = msg('ANSWER', 'ok', { parents: [{ msg_id: q2.msg_id }] });
    expect(openQuestionsOf([q1, q2, a, both])).toEqual([]);
  });

  it('the next prompt gets the answers (with their questions) and waking messages since the last attempt started', () => {
    const start0 = msg('INFO', 'starting root agent (restart #0)');
    const q = msg('QUESTION', 'Which DB?', { run_id: 'run-1' });
    const start1 = msg('INFO', 'starting root agent (restart #1)');
    const a = msg('ANSWER', 'SQLite', { parents: [{ msg_id: q.msg_id }] });
    const wake = msg('USER', 'review: rename foo', { meta: { resume: 'true' } });
    const noise = msg('PROGRESS', 'half way');
    expect(inputContextOf([start0, q])).toBe('');
    const text = inputContextOf([start0, q, start1, a, wake, noise]);
    expect(text).toBe(
      `## New input since your last run\n\nQuestion (QUESTION ${q.msg_id}):\nWhich DB?\n\nAnswer (${a.msg_id}):\nSQLite\n\n` +
        `New message (USER ${wake.msg_id}):\nreview: rename foo\n\n## Task\n\n`,
    );
    // once the next attempt has started, the same input is not repeated
    expect(inputContextOf([start0, q, start1, a, wake, msg('INFO', 'starting root agent (restart #2)')])).toBe('');
    // an agent's own message with the same text does not count as an attempt start
    expect(inputContextOf([start0, q, a, msg('INFO', 'starting root agent (restart #1)', { run_id: 'run-2' })])).toContain('SQLite');
  });
});

describe('needs-input: ask, answer, wait, wake on real files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'needs-input-unit-'));
  const root = join(dir, 'runs');
  const taskId = 'task-20260101-000000-unit';
  const taskDir = join(root, 'proj', taskId);
  const bus = join(taskDir, 'TASK-MESSAGE-BUS.md');
  beforeAll(() => mkdirSync(taskDir, { recursive: true }));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('ask writes the state file; answer closes the question, removes it, and waitForAnswer returns the answer', async () => {
    const q = await askQuestion({ busPath: bus, taskDir, projectId: 'proj', taskId, runId: 'r1', body: 'Which?', writers });
    expect(existsSync(join(taskDir, NEEDS_INPUT_FILE))).toBe(true);
    expect(needsInputOf(taskDir, bus).map((x) => x.msg_id)).toEqual([q.msg_id]);
    expect(scanOpenQuestions(new RunsLayout(root))).toEqual([{ project_id: 'proj', task_id: taskId, questions: [expect.objectContaining({ msg_id: q.msg_id, body: 'Which?' })] }]);
    const waiting = waitForAnswer(bus, q.msg_id, { pollMs: 10, timeoutMs: 10_000 });
    const { answer, questions } = await answerQuestion({ busPath: bus, writers, taskDir, projectId: 'proj', taskId, body: 'That one.' });
    expect(questions.map((x) => x.msg_id)).toEqual([q.msg_id]);
    await expect(waiting).resolves.toMatchObject({ msg_id: answer.msg_id, body: 'That one.' });
    expect(existsSync(join(taskDir, NEEDS_INPUT_FILE))).toBe(false);
    expect(needsInputOf(taskDir, bus)).toEqual([]);
    await expect(answerQuestion({ busPath: bus, writers, taskDir, projectId: 'proj', taskId, body: 'again' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(askQuestion({ busPath: bus, taskDir, projectId: 'proj', taskId, body: '  ', writers })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('a stale state file (crash after the answer, before the removal) reads as no state', async () => {
    writeFileSync(join(taskDir, NEEDS_INPUT_FILE), '{}\n');
    expect(needsInputOf(taskDir, bus)).toEqual([]);
  });

  it('waitForAnswer gives up after its timeout', async () => {
    const q = await askQuestion({ busPath: bus, projectId: 'proj', taskId, body: 'still there?', writers });
    await expect(waitForAnswer(bus, q.msg_id, { pollMs: 5, timeoutMs: 50 })).rejects.toMatchObject({ code: 'STOPPED' });
    await answerQuestion({ busPath: bus, writers, projectId: 'proj', taskId, body: 'yes' });
  });

  it('wakeTask posts the message marked resume and removes DONE; it refuses a task without TASK.md or an empty body', async () => {
    await expect(wakeTask({ layout: new RunsLayout(root), writers, projectId: 'proj', taskId, body: 'x' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    writeFileSync(join(taskDir, 'TASK.md'), 'do it\n');
    writeFileSync(join(taskDir, 'DONE'), '');
    await expect(wakeTask({ layout: new RunsLayout(root), writers, projectId: 'proj', taskId, body: ' ' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect(existsSync(join(taskDir, 'DONE'))).toBe(true);
    const woken = await wakeTask({ layout: new RunsLayout(root), writers, projectId: 'proj', taskId, body: 'CI failed', type: 'CI' });
    expect(woken).toMatchObject({ reopened: true, loopRunning: false });
    expect(existsSync(join(taskDir, 'DONE'))).toBe(false);
    const last = readMessages(bus).at(-1)!;
    expect(last).toMatchObject({ msg_id: woken.message.msg_id, type: 'CI', meta: { resume: 'true' }, body: 'CI failed' });
    await expect(wakeTask({ layout: new RunsLayout(root), writers, projectId: 'proj', taskId: '../x', body: 'x' })).rejects.toMatchObject({ code: 'INVALID_ID' });
  });
});
