import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isTaskLoopRunning, NEEDS_INPUT_FILE, runTask, STALLED_FILE } from '@app/runner';
import { RunsLayout } from '@app/storage';
import { agentEnv, busMessages, cliEnv, PROJECT, runInfos, taskId, tempRoot, waitFor } from '../runner/helpers';
import { runCli } from '../../utils/cli';
import { webhookReceiver } from '../../utils/webhook-receiver';
import { loopParts } from '../../utils/loop-parts';

const QUESTION = 'Which database should I use: Postgres or SQLite?';

describe('needs-input: a question parks the Ralph loop until it is answered (#17)', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  const home = mkdtempSync(join(tmpdir(), 'needs-input-home-'));
  const env = cliEnv(home);
  afterAll(() => {
    tmp.cleanup();
    rmSync(home, { recursive: true, force: true });
  });

  const prompts = (task: string): string[] =>
    runInfos(layout.taskDir(PROJECT, task)).map((i) => readFileSync(join(layout.runDir(PROJECT, task, i.run_id), 'prompt.md'), 'utf8'));

  it('QUESTION + exit → needs_input (status, list), no restart within 3× the delay, signed webhook; run-agent answer resumes with Q&A in the prompt; DONE', async () => {
    const hook = await webhookReceiver();
    const task = taskId('ask');
    const restartDelayMs = 300;
    try {
      const config = { agents: {}, webhook: { url: hook.url, events: ['needs_input'], secret: 's3cret', timeout: '2s' } } as never;
      const loop = runTask({
        ...loopParts,
        root: tmp.root,
        projectId: PROJECT,
        taskId: task,
        prompt: 'build the storage layer',
        agent: 'claude',
        config,
        conductorUrl: 'http://127.0.0.1:14355',
        restartDelayMs,
        inputPollMs: 50,
        env: agentEnv({ FAKE_AGENT_POST_BUS: QUESTION, FAKE_AGENT_POST_BUS_TYPE: 'QUESTION', FAKE_AGENT_POST_BUS_ATTEMPTS: '1', FAKE_AGENT_DONE_ON_ATTEMPT: '2' }),
      });
      const taskDir = layout.taskDir(PROJECT, task);
      await waitFor(() => existsSync(join(taskDir, NEEDS_INPUT_FILE)));

      const status = await runCli(['status', '--root', tmp.root, '--project', PROJECT, '--task', task, '--json'], { env });
      expect(status.code).toBe(0);
      expect(JSON.parse(status.stdout).tasks[0]).toMatchObject({ task_id: task, status: 'needs_input', open_questions: 1, done: false });
      const list = await runCli(['list', '--root', tmp.root, '--project', PROJECT, '--status', 'needs_input'], { env });
      expect(list.code).toBe(0);
      expect(list.stdout).toContain(task);

      const delivered = await waitFor(() => hook.received.find((r) => JSON.parse(r.body).event === 'needs_input'));
      expect(delivered.headers['x-conductor-signature']).toBe('sha256=' + createHmac('sha256', 's3cret').update(delivered.body).digest('hex'));
      const question = busMessages(layout.taskBus(PROJECT, task)).find((m) => m.type === 'QUESTION')!;
      expect(JSON.parse(delivered.body)).toEqual({
        event: 'needs_input',
        project_id: PROJECT,
        task_id: task,
        run_id: question.run_id,
        question_id: question.msg_id,
        question_type: 'QUESTION',
        question: QUESTION,
        asked_at: question.ts.toISOString(),
        open_questions: 1,
        ui_url: `http://127.0.0.1:14355/ui/?project=${PROJECT}&task=${task}`,
      });

      // the absence of a restart can only be observed over a span: 3× the restart delay
      await new Promise((r) => setTimeout(r, 3 * restartDelayMs));
      expect(runInfos(taskDir)).toHaveLength(1);
      expect(isTaskLoopRunning(taskDir)).toBe(true);

      const answered = await runCli(['answer', '--root', tmp.root, '--project', PROJECT, '--task', task, '--body', 'Use SQLite.'], { env });
      expect(answered.stderr).toBe('');
      expect(answered.code).toBe(0);
      expect(answered.stdout).toMatch(new RegExp(`^msg_id: MSG-\\S+\\nanswers: ${question.msg_id}\\n$`));

      const result = await loop;
      expect(result.status).toBe('done');
      expect(result.runIds).toHaveLength(2);
      const [first, second] = prompts(task);
      expect(first).not.toContain('Use SQLite.');
      expect(second).toContain(`Question (QUESTION ${question.msg_id}):\n${QUESTION}`);
      expect(second).toContain('Use SQLite.');
      expect(second).toContain('build the storage layer');
      expect(existsSync(join(taskDir, NEEDS_INPUT_FILE))).toBe(false);
      const answer = busMessages(layout.taskBus(PROJECT, task)).find((m) => m.type === 'ANSWER')!;
      expect(answer.parents).toEqual([{ msg_id: question.msg_id, kind: 'answers' }]);
      const after = await runCli(['status', '--root', tmp.root, '--project', PROJECT, '--task', task, '--json'], { env });
      expect(JSON.parse(after.stdout).tasks[0]).toMatchObject({ status: 'completed', done: true });
    } finally {
      hook.server.close();
    }
  }, 60_000);

  it('a question on the last allowed attempt does not spend the restart budget', async () => {
    const task = taskId('budget');
    const loop = runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'x',
      agent: 'codex',
      maxRestarts: 0,
      restartDelayMs: 0,
      inputPollMs: 50,
      env: agentEnv({ FAKE_AGENT_POST_BUS: 'may I?', FAKE_AGENT_POST_BUS_TYPE: 'BLOCKED', FAKE_AGENT_POST_BUS_ATTEMPTS: '1', FAKE_AGENT_DONE_ON_ATTEMPT: '2' }),
    });
    await waitFor(() => existsSync(join(layout.taskDir(PROJECT, task), NEEDS_INPUT_FILE)));
    const answered = await runCli(['answer', '--root', tmp.root, '--project', PROJECT, '--task', task, '--body', 'yes'], { env });
    expect(answered.code).toBe(0);
    await expect(loop).resolves.toMatchObject({ status: 'done' });
  }, 60_000);

  it('the wait budget ends an unanswered wait with a failed task', async () => {
    const task = taskId('budgetwait');
    const result = await runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'x',
      agent: 'claude',
      restartDelayMs: 0,
      inputWaitMs: 200,
      inputPollMs: 20,
      env: agentEnv({ FAKE_AGENT_POST_BUS: 'anyone?', FAKE_AGENT_POST_BUS_TYPE: 'QUESTION' }),
    });
    expect(result).toMatchObject({ status: 'failed', error: 'no answer within the input wait budget (200ms)' });
    expect(result.runIds).toHaveLength(1);
    const bus = busMessages(layout.taskBus(PROJECT, task)).map((m) => `${m.type} ${m.body}`);
    expect(bus[bus.length - 1]).toBe('ERROR task failed: no answer within the input wait budget (200ms)');
  }, 30_000);

  it('run-agent task --input-wait sets the budget from the command line', async () => {
    const task = taskId('cliwait');
    const res = await runCli(['task', '--root', tmp.root, '--project', PROJECT, '--task', task, '--agent', 'claude', '--prompt', 'x', '--restart-delay', '10ms', '--input-wait', '300ms'], {
      env: { ...env, FAKE_AGENT_POST_BUS: 'hello?', FAKE_AGENT_POST_BUS_TYPE: 'QUESTION' },
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('Error: no answer within the input wait budget (300ms)');
    expect(runInfos(layout.taskDir(PROJECT, task))).toHaveLength(1);
    const bad = await runCli(['task', '--root', tmp.root, '--project', PROJECT, '--task', taskId('badwait'), '--agent', 'claude', '--prompt', 'x', '--input-wait', 'soon'], { env });
    expect(bad.code).toBe(2);
  }, 60_000);

  it('run-agent answer without an open question, or without a body, changes nothing', async () => {
    const task = taskId('noq');
    await runTask({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', agent: 'claude', env: agentEnv({ FAKE_AGENT_DONE: '1' }) });
    const before = busMessages(layout.taskBus(PROJECT, task)).length;
    const none = await runCli(['answer', '--root', tmp.root, '--project', PROJECT, '--task', task, '--body', 'hi'], { env });
    expect(none).toMatchObject({ code: 2, stderr: `Error: task ${task} has no open question\n` });
    const empty = await runCli(['answer', '--root', tmp.root, '--project', PROJECT, '--task', task, '--body', ' '], { env });
    expect(empty).toMatchObject({ code: 2, stderr: 'Error: --body is required (or pipe the answer on stdin)\n' });
    const badTask = await runCli(['answer', '--root', tmp.root, '--project', PROJECT, '--task', '../x', '--body', 'hi'], { env });
    expect(badTask.code).toBe(2);
    expect(busMessages(layout.taskBus(PROJECT, task))).toHaveLength(before);
  }, 30_000);

  it('bus post --resume on a DONE task removes DONE and restarts the loop with the message in the prompt', async () => {
    const task = taskId('wake');
    const first = await runTask({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'ship the feature', agent: 'claude', env: agentEnv({ FAKE_AGENT_DONE: '1' }) });
    expect(first.status).toBe('done');
    const taskDir = layout.taskDir(PROJECT, task);
    const woke = await runCli(['bus', 'post', '--root', tmp.root, '--project', PROJECT, '--task', task, '--type', 'USER', '--body', 'PR review: rename foo to bar', '--resume'], {
      env: { ...env, FAKE_AGENT_DONE: '1' },
    });
    expect(woke.stderr).toBe('');
    expect(woke.code).toBe(0);
    expect(woke.stdout).toMatch(/^msg_id: MSG-\S+\nresume: started a Ralph loop \(pid \d+\)\n$/);
    await waitFor(() => runInfos(taskDir).length === 2 && runInfos(taskDir).every((i) => i.status === 'completed') && !isTaskLoopRunning(taskDir), 30_000);
    expect(existsSync(join(taskDir, 'DONE'))).toBe(true);
    // run ids order by time only to the second (then by pid): tell the runs apart by id, not by order
    const promptOf = (runId: string) => readFileSync(join(layout.runDir(PROJECT, task, runId), 'prompt.md'), 'utf8');
    const secondRun = runInfos(taskDir).map((i) => i.run_id).find((id) => id !== first.runIds[0])!;
    expect(promptOf(secondRun)).toContain('PR review: rename foo to bar');
    expect(promptOf(secondRun)).toContain('ship the feature');
    expect(promptOf(first.runIds[0])).not.toContain('PR review');
  }, 60_000);

  it('a run without output or bus activity is flagged stalled (bus + marker + status), and killed only when configured', async () => {
    const task = taskId('stall');
    const loop = runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'x',
      agent: 'claude',
      stallAfterMs: 300,
      // silent until the test lets it go: the run is still running when its status is read
      env: agentEnv({ FAKE_AGENT_WAIT_FILE: join(tmp.root, 'stall-go'), FAKE_AGENT_DONE: '1' }),
    });
    const taskDir = layout.taskDir(PROJECT, task);
    const warning = await waitFor(() => busMessages(layout.taskBus(PROJECT, task)).find((m) => m.meta?.kind === 'stalled'));
    const runId = readdirSync(join(taskDir, 'runs'))[0];
    expect(warning).toMatchObject({ type: 'WARNING', run_id: runId, body: `run ${runId} stalled: no output and no bus activity for 300ms` });
    const status = await runCli(['status', '--root', tmp.root, '--project', PROJECT, '--task', task, '--json'], { env });
    expect(JSON.parse(status.stdout).tasks[0]).toMatchObject({ status: 'running', stalled: true });
    writeFileSync(join(tmp.root, 'stall-go'), '');
    await expect(loop).resolves.toMatchObject({ status: 'done' });
    expect(runInfos(taskDir)[0]).toMatchObject({ status: 'completed', exit_code: 0 });

    const killed = taskId('stallkill');
    const result = await runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: killed,
      prompt: 'x',
      agent: 'claude',
      maxRestarts: 0,
      stallAfterMs: 300,
      killOnStall: true,
      env: agentEnv({ FAKE_AGENT_SLEEP_MS: '60000' }),
    });
    expect(result.status).toBe('failed');
    const info = runInfos(layout.taskDir(PROJECT, killed))[0];
    expect(info.status).toBe('failed');
    expect(existsSync(join(layout.runDir(PROJECT, killed, info.run_id), STALLED_FILE))).toBe(true);
  }, 60_000);
});
