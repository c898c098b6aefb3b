import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUDGET_EXCEEDED_FILE, RATE_LIMITED_FILE, runTask } from '@app/runner';
import { RunsLayout } from '@app/storage';
import { agentEnv, busMessages, cliEnv, PROJECT, runInfos, taskId, tempRoot } from '../runner/helpers';
import { runCli } from '../../utils/cli';
import { loopParts } from '../../utils/loop-parts';

// progress lines go to stderr before the error line
const lastLine = (text: string) => text.trimEnd().split('\n').at(-1);
const runsInOrder = (taskDir: string) => runInfos(taskDir).sort((a, b) => a.start_time.getTime() - b.start_time.getTime());

// #18 behaviours the other usage suites leave out: the codex and gemini rate-limit texts through the
// loop, the cost budget, and budget defaults from the config file, through the real CLI.
describe('usage: rate limits of codex/gemini, cost budget, config budget defaults (#18)', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  const home = mkdtempSync(join(tmpdir(), 'usage-gaps-home-'));
  afterAll(() => {
    tmp.cleanup();
    rmSync(home, { recursive: true, force: true });
  });

  it.each(['codex', 'gemini'])('%s printing a 429 "retry in 2s": the loop waits without counting a restart, then completes', async (agent) => {
    const task = taskId(`rl-${agent}`);
    const taskDir = layout.taskDir(PROJECT, task);
    const result = await runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'work',
      agent,
      maxRestarts: 0, // a counted attempt would fail the task before its second run
      restartDelayMs: 10,
      holdPollMs: 50,
      env: agentEnv({ FAKE_AGENT_RATE_LIMIT_RESET_S: '2', FAKE_AGENT_RATE_LIMIT_ATTEMPTS: '1', FAKE_AGENT_DONE_ON_ATTEMPT: '2' }),
    });
    expect(result.status).toBe('done');
    const [refused, resumed] = runsInOrder(taskDir);
    expect(refused.status).toBe('failed');
    expect(refused.resume_at).toBeDefined();
    expect(resumed.start_time.getTime()).toBeGreaterThanOrEqual(refused.resume_at!.getTime());
    expect(busMessages(layout.taskBus(PROJECT, task)).map((m) => m.body)).toContain(`rate limited until ${refused.resume_at!.toISOString()}: waiting without counting a restart (run slot released)`);
    expect(existsSync(join(taskDir, RATE_LIMITED_FILE))).toBe(false);
  });

  it('run-agent task --max-cost-usd: over the cost after the second run, stopped with BUDGET_EXCEEDED, exit 1', async () => {
    const task = taskId('cost');
    const r = await runCli(['task', '--root', tmp.root, '--project', PROJECT, '--task', task, '--agent', 'claude', '--prompt', 'spend', '--max-cost-usd', '0.015', '--restart-delay', '10ms'], { env: cliEnv(home, { FAKE_AGENT_USAGE: '100,50,0,0,0.01' }) });
    expect(r.code).toBe(1);
    expect(lastLine(r.stderr)).toBe('Error: task stopped: budget exceeded: cost $0.02 > max $0.015');
    const taskDir = layout.taskDir(PROJECT, task);
    expect(runInfos(taskDir)).toHaveLength(2);
    expect(readFileSync(join(taskDir, BUDGET_EXCEEDED_FILE), 'utf8')).toBe('budget exceeded: cost $0.02 > max $0.015\n');
    expect(readFileSync(join(taskDir, 'TASK-SETTINGS.yaml'), 'utf8')).toBe('max_cost_usd: 0.015\n');
    expect(busMessages(layout.taskBus(PROJECT, task)).filter((m) => m.type === 'BUDGET_EXCEEDED').map((m) => m.body)).toEqual(['budget exceeded: cost $0.02 > max $0.015; stopping the task tree (not restarting)']);
  });

  it('defaults.max_tokens in the config file budgets a task that gives none', async () => {
    const task = taskId('cfgbudget');
    const config = join(home, 'config.yaml');
    writeFileSync(config, 'agents:\n  claude:\n    type: claude\ndefaults:\n  max_tokens: 200\n');
    const r = await runCli(['task', '--root', tmp.root, '--config', config, '--project', PROJECT, '--task', task, '--agent', 'claude', '--prompt', 'spend', '--restart-delay', '10ms'], { env: cliEnv(home, { FAKE_AGENT_USAGE: '100,50' }) });
    expect(r.code).toBe(1);
    expect(lastLine(r.stderr)).toBe('Error: task stopped: budget exceeded: tokens 300 > max 200');
    expect(runInfos(layout.taskDir(PROJECT, task))).toHaveLength(2);
    // the budget came from the config: nothing was stored for the task
    expect(existsSync(join(layout.taskDir(PROJECT, task), 'TASK-SETTINGS.yaml'))).toBe(false);
  });
});
