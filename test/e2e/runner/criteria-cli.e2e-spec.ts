import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunsLayout } from '@app/storage';
import { runCli } from '../../utils/cli';
import { gitSync, makeRepo } from '../../utils/git-repo';
import { busMessages, cliEnv, PROJECT, runInfos, SUITE_AGENTS, taskId, tempRoot } from './helpers';

/** A real git repo whose real `node --test` fails until sum.js is fixed. */
function buggyRepo(dir: string): string {
  makeRepo(dir);
  writeFileSync(join(dir, 'sum.js'), 'module.exports = (a, b) => a - b;\n');
  writeFileSync(
    join(dir, 'sum.test.js'),
    "const test = require('node:test');\nconst assert = require('node:assert');\nconst sum = require('./sum.js');\ntest('sum adds', () => assert.strictEqual(sum(2, 3), 5));\n",
  );
  gitSync(dir, 'add', '-A');
  gitSync(dir, 'commit', '-q', '-m', 'buggy sum');
  return dir;
}

describe('run-agent task/job --done-when (completion criteria)', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  const home = join(tmp.root, '..', 'home');
  const configPath = join(home, 'config.yaml');
  beforeAll(() => {
    mkdirSync(home, { recursive: true });
    writeFileSync(
      configPath,
      ['agents:', '  fixer:', '    type: command', `    command: ${join(SUITE_AGENTS, 'fix-on-second-attempt')}`, '  claude: {}', 'defaults:', '  agent: fixer', '  timeout: 300', ''].join('\n'),
    );
  });
  afterAll(() => tmp.cleanup());

  it('task --done-when: DONE is rejected until the real test passes; status shows the criteria', async () => {
    const repo = buggyRepo(join(tmp.root, '..', 'repo'));
    const task = taskId('cli');
    const env = cliEnv(home);
    const r = await runCli(
      ['task', '--root', tmp.root, '--config', configPath, '--project', PROJECT, '--task', task, '--prompt', 'fix sum', '--cwd', repo, '--restart-delay', '0s', '--max-restarts', '3', '--done-when', 'node --test sum.test.js', '--done-timeout', '2m'],
      { env, cwd: home },
    );
    expect(r.code).toBe(0);
    const runs = runInfos(layout.taskDir(PROJECT, task));
    expect(runs.map((i) => i.criteria?.passed)).toEqual([false, true]);
    expect(busMessages(layout.taskBus(PROJECT, task)).filter((m) => m.type === 'CRITERIA_FAILED')).toHaveLength(1);
    const status = await runCli(['status', '--root', tmp.root, '--project', PROJECT, '--task', task], { env, cwd: home });
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/CRITERIA\n/);
    expect(status.stdout).toMatch(/ passed\n$/);
    const json = JSON.parse((await runCli(['status', '--root', tmp.root, '--project', PROJECT, '--task', task, '--json'], { env, cwd: home })).stdout);
    expect(json.tasks[0].criteria).toMatchObject({ state: 'passed', rejected: 1, commands: [{ command: 'node --test sum.test.js' }] });
  }, 120_000);

  it('bad --done-when / --done-timeout: one error line, exit 2, nothing written', async () => {
    const env = cliEnv(home);
    const t = taskId('bad');
    for (const [args, message] of [
      [['--done-when', '  '], 'Error: done criterion 1 is empty: give a command such as "npm test"\n'],
      [['--done-when', 'true', '--done-timeout', '0s'], 'Error: done criteria timeout must be a duration between 1s and 24h like 5m, got "0s"\n'],
    ] as const) {
      for (const cmd of ['task', 'job']) {
        const r = await runCli([cmd, '--root', tmp.root, '--config', configPath, '--project', PROJECT, '--task', t, '--prompt', 'x', ...args], { env, cwd: home });
        expect(r.stderr).toBe(message);
        expect(r.code).toBe(2);
      }
    }
    expect(existsSync(layout.taskDir(PROJECT, t))).toBe(false);
  });

  it('job --done-when: a DONE whose criterion fails is set aside and the job fails', async () => {
    const env = cliEnv(home, { FAKE_AGENT_DONE: '1' });
    const t = taskId('job');
    const r = await runCli(['job', '--root', tmp.root, '--config', configPath, '--project', PROJECT, '--task', t, '--agent', 'claude', '--prompt', 'x', '--done-when', 'exit 3'], { env, cwd: home });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('Error: completion criteria failed: criterion "exit 3" failed: exit code 3\n');
    const taskDir = layout.taskDir(PROJECT, t);
    const [run] = runInfos(taskDir);
    expect(readdirSync(taskDir).filter((f) => f.startsWith('DONE'))).toEqual([`DONE.rejected-${run.run_id}`]);
    expect(run.criteria).toMatchObject({ passed: false, results: [{ command: 'exit 3', exit_code: 3 }] });

    const ok = taskId('jobok');
    const passed = await runCli(['job', '--root', tmp.root, '--config', configPath, '--project', PROJECT, '--task', ok, '--agent', 'claude', '--prompt', 'x', '--done-when', 'true'], { env, cwd: home });
    expect(passed.stderr).toBe('');
    expect(passed.code).toBe(0);
    expect(existsSync(join(layout.taskDir(PROJECT, ok), 'DONE'))).toBe(true);
  });
});
