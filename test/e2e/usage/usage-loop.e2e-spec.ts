import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUDGET_EXCEEDED_FILE, queueDir, RATE_LIMITED_FILE, runTask } from '@app/runner';
import { RunsLayout } from '@app/storage';
import { agentEnv, busMessages, cliEnv, PROJECT, runInfos, taskId, tempRoot, waitFor } from '../runner/helpers';
import { runCli } from '../../utils/cli';
import { webhookReceiver } from '../../utils/webhook-receiver';
import { loopParts } from '../../utils/loop-parts';

/** A task's runs in start order (run ids end in an unpadded sequence number, so names do not sort). */
const runsInOrder = (taskDir: string) => runInfos(taskDir).sort((a, b) => a.start_time.getTime() - b.start_time.getTime());

describe('budgets, rate limits and session resume in the Ralph loop (#18)', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  const home = mkdtempSync(join(tmpdir(), 'usage-loop-home-'));
  afterAll(() => {
    tmp.cleanup();
    rmSync(home, { recursive: true, force: true });
  });

  it('--max-tokens just below the second run\'s total: stopped after that run, BUDGET_EXCEEDED + webhook, nothing restarts it', async () => {
    const hook = await webhookReceiver();
    const task = taskId('budget');
    try {
      const config = { agents: {}, webhook: { url: hook.url, events: ['budget_exceeded'], timeout: '2s' } } as never;
      const opts = {
        ...loopParts,
        root: tmp.root,
        projectId: PROJECT,
        taskId: task,
        prompt: 'spend tokens',
        agent: 'claude',
        config,
        restartDelayMs: 10,
        holdPollMs: 50,
        env: agentEnv({ FAKE_AGENT_USAGE: '100,50,0,0,0.01' }),
      };
      const result = await runTask({ ...opts, budget: { max_tokens: 299 } });
      expect(result.status).toBe('stopped');
      expect(result.error).toBe('task stopped: budget exceeded: tokens 300 > max 299');
      const taskDir = layout.taskDir(PROJECT, task);
      expect(runInfos(taskDir).map((i) => i.usage?.input_tokens)).toEqual([100, 100]);
      const budgetMsg = busMessages(layout.taskBus(PROJECT, task)).filter((m) => m.type === 'BUDGET_EXCEEDED');
      expect(budgetMsg.map((m) => m.body)).toEqual(['budget exceeded: tokens 300 > max 299; stopping the task tree (not restarting)']);
      expect(readFileSync(join(taskDir, BUDGET_EXCEEDED_FILE), 'utf8')).toBe('budget exceeded: tokens 300 > max 299\n');
      const delivered = await waitFor(() => hook.received[0]);
      expect(JSON.parse(delivered.body)).toEqual({
        event: 'budget_exceeded',
        project_id: PROJECT,
        task_id: task,
        run_id: '',
        reason: 'budget exceeded: tokens 300 > max 299',
        tokens: 300,
        cost_usd: 0.02,
        wall_time_seconds: expect.any(Number),
        max_tokens: 299,
      });
      expect(readFileSync(join(taskDir, 'TASK-SETTINGS.yaml'), 'utf8')).toBe('max_tokens: 299\n');

      // a new loop of the task (resume) starts no run while the budget is spent
      const again = await runTask(opts);
      expect(again.status).toBe('stopped');
      expect(runInfos(taskDir)).toHaveLength(2);
      const status = JSON.parse((await runCli(['status', '--root', tmp.root, '--project', PROJECT, '--task', task, '--json'], { env: cliEnv(home) })).stdout);
      expect(status.tasks[0]).toMatchObject({ status: 'budget_exceeded', budget_exceeded: 'budget exceeded: tokens 300 > max 299', usage: { total_tokens: 300 } });
      expect(hook.received).toHaveLength(1);

      // raising the budget (task resume --max-tokens) clears the mark and the task runs again
      const raised = await runTask({ ...opts, budget: { max_tokens: 10_000 }, env: agentEnv({ FAKE_AGENT_USAGE: '100,50,0,0,0.01', FAKE_AGENT_DONE: '1' }) });
      expect(raised.status).toBe('done');
      expect(runInfos(taskDir)).toHaveLength(3);
      expect(existsSync(join(taskDir, BUDGET_EXCEEDED_FILE))).toBe(false);
      expect(readFileSync(join(taskDir, 'TASK-SETTINGS.yaml'), 'utf8')).toBe('max_tokens: 10000\n');
    } finally {
      hook.server.close();
    }
  });

  it('a child run that pushes the tree over budget stops the running root run gracefully (the watch during an attempt)', async () => {
    const task = taskId('watch');
    const taskDir = layout.taskDir(PROJECT, task);
    const loop = runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'delegate',
      agent: 'claude',
      restartDelayMs: 10,
      holdPollMs: 50,
      stopGraceMs: 2000,
      budget: { max_tokens: 500 },
      env: agentEnv({ FAKE_AGENT_SLEEP_MS: '60000', FAKE_AGENT_USAGE: '10,5' }),
    });
    const rootRun = await waitFor(() => runInfos(taskDir).find((i) => i.pid > 0 && i.status === 'running'), 20_000);
    const child = await runCli(['job', '--root', tmp.root, '--project', PROJECT, '--task', taskId('child'), '--agent', 'codex', '--prompt', 'spend', '--parent-run-id', rootRun.run_id], { env: cliEnv(home, { FAKE_AGENT_USAGE: '600,1' }) });
    expect(child.code).toBe(0);
    const result = await loop;
    expect(result).toMatchObject({ status: 'stopped', error: 'task stopped: budget exceeded: tokens 601 > max 500' });
    const [stopped] = runInfos(taskDir);
    expect(runInfos(taskDir)).toHaveLength(1);
    expect(stopped.status).toBe('failed');
    expect(readFileSync(join(layout.runDir(PROJECT, task, stopped.run_id), 'STOPPED-BY'), 'utf8')).toBe(`budget of task ${task}\n`);
    expect(busMessages(layout.taskBus(PROJECT, task)).filter((m) => m.type === 'BUDGET_EXCEEDED')).toHaveLength(1);
  });

  it('--max-wall-time stops a long attempt', async () => {
    const task = taskId('wall');
    const result = await runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'take long',
      agent: 'gemini',
      holdPollMs: 50,
      stopGraceMs: 2000,
      budget: { max_wall_time_ms: 1500 },
      env: agentEnv({ FAKE_AGENT_SLEEP_MS: '60000' }),
    });
    expect(result.status).toBe('stopped');
    expect(result.error).toMatch(/^task stopped: budget exceeded: wall time \d+s > max 1\.5s$/);
    expect(runInfos(layout.taskDir(PROJECT, task))).toHaveLength(1);
  });

  it('run-agent job --max-tokens: the job tree over budget fails the job with BUDGET_EXCEEDED', async () => {
    const task = taskId('jobbudget');
    const r = await runCli(['job', '--root', tmp.root, '--project', PROJECT, '--task', task, '--agent', 'claude', '--prompt', 'x', '--max-tokens', '100'], { env: cliEnv(home, { FAKE_AGENT_USAGE: '90,20' }) });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('Error: budget exceeded: tokens 110 > max 100\n');
    expect(busMessages(layout.taskBus(PROJECT, task)).map((m) => m.type)).toEqual(['RUN_START', 'RUN_STOP', 'BUDGET_EXCEEDED']);
    const ok = await runCli(['job', '--root', tmp.root, '--project', PROJECT, '--task', taskId('jobok'), '--agent', 'claude', '--prompt', 'x', '--max-tokens', '1000'], { env: cliEnv(home, { FAKE_AGENT_USAGE: '90,20' }) });
    expect(ok.code).toBe(0);
  });

  it('claude rate-limit event 6 s ahead (room for a CLI status call on a loaded machine): rate_limited, no restart counted, a queued task takes the slot, resumes after the reset', async () => {
    const root = join(tmp.root, '..', 'rl-runs');
    mkdirSync(root, { recursive: true });
    const rl = new RunsLayout(root);
    const config = { agents: {}, defaults: { max_concurrent_runs: 1 } } as never;
    const a = taskId('limited');
    const b = taskId('other');
    const loopA = runTask({
      ...loopParts,
      root,
      projectId: PROJECT,
      taskId: a,
      prompt: 'hit the limit',
      agent: 'claude',
      config,
      maxRestarts: 0, // a counted restart would fail the task
      restartDelayMs: 10,
      holdPollMs: 50,
      env: agentEnv({ FAKE_AGENT_RATE_LIMIT_RESET_S: '6', FAKE_AGENT_RATE_LIMIT_ATTEMPTS: '1', FAKE_AGENT_SLEEP_MS: '1000', FAKE_AGENT_DONE_ON_ATTEMPT: '2' }),
    });
    await waitFor(() => runInfos(rl.taskDir(PROJECT, a))[0]?.pid > 0 && runInfos(rl.taskDir(PROJECT, a))[0].status === 'running', 20_000);
    const loopB = runTask({ ...loopParts, root, projectId: PROJECT, taskId: b, prompt: 'other work', agent: 'claude', config, maxRestarts: 0, env: agentEnv({ FAKE_AGENT_DONE: '1', FAKE_AGENT_SLEEP_MS: '500' }) });
    // B waits for the only slot while A's agent runs
    await waitFor(() => existsSync(queueDir(root)) && readdirSync(queueDir(root)).length > 0, 20_000);

    const taskDirA = rl.taskDir(PROJECT, a);
    await waitFor(() => existsSync(join(taskDirA, RATE_LIMITED_FILE)), 20_000);
    const first = runsInOrder(taskDirA)[0];
    expect(first.resume_at).toBeInstanceOf(Date);
    const status = await waitFor('run-agent status to show A rate limited', async () => {
      const s = JSON.parse((await runCli(['status', '--root', root, '--project', PROJECT, '--task', a, '--json'], { env: cliEnv(home) })).stdout).tasks[0];
      return s.status === 'rate_limited' ? s : undefined;
    });
    expect(status.resume_at).toBe(first.resume_at!.toISOString());

    const [resA, resB] = await Promise.all([loopA, loopB]);
    expect(resB.status).toBe('done');
    expect(resA.status).toBe('done');
    const runsA = runsInOrder(taskDirA);
    const runB = runInfos(rl.taskDir(PROJECT, b))[0];
    expect(runsA).toHaveLength(2);
    // B ran in the slot A released; A's second attempt started after the reset
    expect(runB.start_time.getTime()).toBeLessThan(runsA[1].start_time.getTime());
    expect(runB.start_time.getTime()).toBeLessThan(first.resume_at!.getTime());
    expect(runsA[1].start_time.getTime()).toBeGreaterThanOrEqual(first.resume_at!.getTime());
    const bodies = busMessages(rl.taskBus(PROJECT, a)).map((m) => `${m.type} ${m.body}`);
    expect(bodies).toContain(`INFO rate limited until ${first.resume_at!.toISOString()}: waiting without counting a restart (run slot released)`);
    expect(bodies.filter((x) => x.startsWith('INFO starting root agent'))).toEqual(['INFO starting root agent (restart #0)', 'INFO starting root agent (restart #1)']);
    expect(existsSync(join(taskDirA, RATE_LIMITED_FILE))).toBe(false);
  });

  it.each([
    ['claude', (id: string) => ['--resume', id]],
    ['codex', (id: string) => ['resume', id, '-']],
    ['gemini', (id: string) => ['--resume', id]],
  ])('%s with resume_mode continue: the second attempt\'s command line carries the first attempt\'s session id', async (agent, expected) => {
    const task = taskId(`resume-${agent}`);
    const dumps = mkdtempSync(join(tmpdir(), 'usage-dumps-'));
    try {
      const result = await runTask({
        ...loopParts,
        root: tmp.root,
        projectId: PROJECT,
        taskId: task,
        prompt: 'keep going',
        agent,
        restartDelayMs: 10,
        budget: { resume_mode: 'continue' },
        env: agentEnv({ FAKE_AGENT_DONE_ON_ATTEMPT: '2', FAKE_AGENT_ENV_DUMP: dumps }),
      });
      expect(result.status).toBe('done');
      const [first, second] = runsInOrder(layout.taskDir(PROJECT, task));
      expect(first.session_id).toBeTruthy();
      expect(first.commandline).not.toContain(first.session_id!);
      const argv = JSON.parse(readFileSync(join(dumps, `${second.run_id}.json`), 'utf8')).argv as string[];
      expect(argv.slice(-expected(first.session_id!).length)).toEqual(expected(first.session_id!));
      expect(second.commandline).toContain(first.session_id!);
      // the CLI continued the same conversation
      expect(second.session_id).toBe(first.session_id);
    } finally {
      rmSync(dumps, { recursive: true, force: true });
    }
  });

  it('resume_mode fresh (default): no resume argument', async () => {
    const task = taskId('fresh');
    const result = await runTask({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'go', agent: 'claude', restartDelayMs: 10, env: agentEnv({ FAKE_AGENT_DONE_ON_ATTEMPT: '2' }) });
    expect(result.status).toBe('done');
    const [first, second] = runsInOrder(layout.taskDir(PROJECT, task));
    expect(second.commandline).not.toContain('--resume');
    expect(second.session_id).not.toBe(first.session_id);
  });

  it.each(['task', 'project'])('run-agent pause (%s) holds the next attempt without counting it until unpause', async (scope) => {
    const task = taskId(`pause-${scope}`);
    const taskDir = layout.taskDir(PROJECT, task);
    mkdirSync(taskDir, { recursive: true });
    const env = cliEnv(home);
    const target = ['--root', tmp.root, '--project', PROJECT, ...(scope === 'task' ? ['--task', task] : [])];
    const paused = await runCli(['pause', ...target], { env });
    expect(paused.stderr).toBe('');
    expect(paused.stdout).toBe(`${scope === 'task' ? task : PROJECT}: paused\n`);
    const loop = runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'go',
      agent: 'claude',
      maxRestarts: 0, // a counted wait would leave no attempt
      holdPollMs: 50,
      env: agentEnv({ FAKE_AGENT_DONE: '1' }),
    });
    await waitFor(() => busMessages(layout.taskBus(PROJECT, task)).some((m) => m.body === `${scope} paused: holding the next attempt until unpaused`), 20_000);
    const status = JSON.parse((await runCli(['status', '--root', tmp.root, '--project', PROJECT, '--task', task, '--json'], { env })).stdout);
    expect(status.tasks[0]).toMatchObject({ status: 'paused', paused: scope });
    expect(runInfos(taskDir)).toHaveLength(0);
    const unpaused = await runCli(['unpause', ...target], { env });
    expect(unpaused.stdout).toBe(`${scope === 'task' ? task : PROJECT}: unpaused\n`);
    const result = await loop;
    expect(result.status).toBe('done');
    expect(runInfos(taskDir)).toHaveLength(1);
    expect(busMessages(layout.taskBus(PROJECT, task)).map((m) => m.body)).toContain('unpaused; resuming the task');
  });

  it('pause: bad input is a usage error and changes nothing', async () => {
    const env = cliEnv(home);
    const bad = await runCli(['pause', '--root', tmp.root, '--project', '../etc'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^Error: .*\n$/);
    const missing = await runCli(['pause', '--root', tmp.root, '--project', PROJECT, '--task', taskId('nowhere')], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^Error: task task-\S+ not found\n$/);
    expect(existsSync(join(tmp.root, '..', 'etc', 'PAUSED'))).toBe(false);
  });
});
