import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunsLayout } from '@app/storage';
import { busMessages, cliEnv, PROJECT, runInfos, taskId, tempRoot, waitFor } from '../runner/helpers';
import { runCli, startCli, type StartedCli } from '../../utils/cli';
import { webhookReceiver, type WebhookReceiver } from '../../utils/webhook-receiver';

/*
 * #30 item 4: `run-agent ask` fires the `needs_input` webhook exactly once, with and without
 * --wait (an agent blocked in `ask --wait` never ends its run, so the loop's gate alone never
 * saw the question). Real CLI loop, real agents asking through the real CLI, real receiver.
 */
describe('needs-input: run-agent ask fires the needs_input webhook once (#30 item 4)', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  const home = mkdtempSync(join(tmpdir(), 'ask-webhook-home-'));
  let hook: WebhookReceiver;
  let configPath: string;
  const loops: StartedCli[] = [];
  afterEach(() => {
    for (const l of loops.splice(0)) if (l.child.exitCode === null && l.child.signalCode === null) l.child.kill('SIGKILL');
  });
  beforeAll(async () => {
    hook = await webhookReceiver();
    // asks without waiting on its first attempt, then finishes on the next one
    const asker = join(home, 'ask-and-exit');
    writeFileSync(
      asker,
      '#!/bin/sh\ncat > /dev/null\nif [ ! -f "$JRUN_TASK_FOLDER/asked" ]; then touch "$JRUN_TASK_FOLDER/asked"; run-agent ask --body "Postgres or SQLite?"; exit 0; fi\ntouch "$JRUN_TASK_FOLDER/DONE"\n',
      { mode: 0o755 },
    );
    configPath = join(home, 'config.yaml');
    writeFileSync(
      configPath,
      `agents:\n  claude:\n    type: claude\n  asker:\n    type: command\n    command: ${asker}\nwebhook:\n  url: ${hook.url}\n  events: [needs_input]\n  timeout: 5s\nstorage:\n  runs_dir: ${tmp.root}\n`,
    );
  });
  afterAll(async () => {
    await hook.close();
    tmp.cleanup();
    rmSync(home, { recursive: true, force: true });
  });

  const needsInput = (task: string) => hook.received.map((r) => JSON.parse(r.body)).filter((b) => b.event === 'needs_input' && b.task_id === task);
  const question = (task: string) => busMessages(layout.taskBus(PROJECT, task)).find((m) => m.type === 'QUESTION');

  it('ask --wait: the webhook arrives while the agent waits, names the question, and is not sent again', async () => {
    const task = taskId('askwait');
    const env = cliEnv(home, { FAKE_AGENT_ASK_WAIT: 'Which database?', FAKE_AGENT_DONE: '1' });
    const loop = startCli(['task', '--config', configPath, '--project', PROJECT, '--task', task, '--agent', 'claude', '--prompt', 'build it'], { env });
    loops.push(loop);
    const delivered = await waitFor('the needs_input webhook', () => needsInput(task)[0]);
    // the agent is still blocked in `ask --wait`: its run has not ended
    expect(runInfos(layout.taskDir(PROJECT, task)).map((i) => i.status)).toEqual(['running']);
    const q = question(task)!;
    expect(delivered).toMatchObject({ event: 'needs_input', project_id: PROJECT, task_id: task, run_id: q.run_id, question_id: q.msg_id, question_type: 'QUESTION', question: 'Which database?', open_questions: 1 });

    const answered = await runCli(['answer', '--root', tmp.root, '--project', PROJECT, '--task', task, '--body', 'SQLite'], { env });
    expect([answered.code, answered.stderr]).toEqual([0, '']);
    const result = await loop.done;
    expect(result.code).toBe(0);
    const [run] = runInfos(layout.taskDir(PROJECT, task));
    expect(readFileSync(join(layout.runDir(PROJECT, task, run.run_id), 'answer.txt'), 'utf8')).toBe('SQLite\n');
    expect(needsInput(task)).toHaveLength(1);
  }, 60_000);

  it('ask without --wait: one webhook for the question, although the loop also parks on it', async () => {
    const task = taskId('asknowait');
    const env = cliEnv(home);
    const loop = startCli(['task', '--config', configPath, '--project', PROJECT, '--task', task, '--agent', 'asker', '--prompt', 'build it', '--restart-delay', '10ms'], { env });
    loops.push(loop);
    const taskDir = layout.taskDir(PROJECT, task);
    // parked: the gate has posted its INFO (the webhook, from either place, is out by then or never)
    await waitFor('the loop parked on the question', () => busMessages(layout.taskBus(PROJECT, task)).some((m) => m.type === 'INFO' && m.body.startsWith('task needs input')));
    const delivered = await waitFor('the needs_input webhook', () => needsInput(task)[0]);
    expect(delivered).toMatchObject({ question_id: question(task)!.msg_id, question: 'Postgres or SQLite?', open_questions: 1 });
    const answered = await runCli(['answer', '--root', tmp.root, '--project', PROJECT, '--task', task, '--body', 'SQLite'], { env });
    expect([answered.code, answered.stderr]).toEqual([0, '']);
    const result = await loop.done;
    expect([result.code, result.stderr]).toEqual([0, expect.any(String)]);
    expect(existsSync(join(taskDir, 'DONE'))).toBe(true);
    expect(needsInput(task)).toHaveLength(1);
  }, 60_000);
});
