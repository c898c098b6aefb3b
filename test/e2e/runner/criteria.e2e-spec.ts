import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildStatusRow, runCriterion, runCriteria, runTask, validateDoneCriteria, writeTaskSettings } from '@app/runner';
import { createLivenessProbe, RunsLayout } from '@app/storage';
import { gitSync, makeRepo } from '../../utils/git-repo';
import { processAlive } from '../../utils/processes';
import { waitFor } from '../../utils/wait';
import { agentEnv, busMessages, PROJECT, runInfos, SUITE_AGENTS, taskId, tempRoot } from './helpers';
import { loopParts } from '../../utils/loop-parts';

const SUM_TEST = [
  "const test = require('node:test');",
  "const assert = require('node:assert');",
  "const sum = require('./sum.js');",
  "test('sum adds', () => assert.strictEqual(sum(2, 3), 5));",
  '',
].join('\n');

/** A real git repo whose real `node --test` fails until sum.js is fixed. */
function buggyRepo(dir: string): string {
  makeRepo(dir);
  writeFileSync(join(dir, 'sum.js'), 'module.exports = (a, b) => a - b;\n');
  writeFileSync(join(dir, 'sum.test.js'), SUM_TEST);
  gitSync(dir, 'add', '-A');
  gitSync(dir, 'commit', '-q', '-m', 'buggy sum');
  return dir;
}

describe('completion criteria (done_criteria) in the Ralph loop', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  const config = { agents: { fixer: { name: 'fixer', type: 'command', command: join(SUITE_AGENTS, 'fix-on-second-attempt') } }, defaults: {} } as never;
  afterAll(() => tmp.cleanup());

  it('a DONE while `node --test` fails is set aside; attempt 2 hears the failure, fixes it and is done', async () => {
    const repo = buggyRepo(join(tmp.root, '..', 'repo-fix'));
    const task = taskId('criteria');
    const result = await runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'make the sum test pass',
      config,
      agent: 'fixer',
      cwd: repo,
      restartDelayMs: 0,
      maxRestarts: 3,
      doneCriteria: validateDoneCriteria(['node --test sum.test.js']),
      env: agentEnv(),
    });
    expect(result.status).toBe('done');
    expect(result.runIds).toHaveLength(2);
    const taskDir = layout.taskDir(PROJECT, task);
    // the rejected DONE is kept as evidence, named after the attempt's run
    expect(readdirSync(taskDir).filter((f) => f.startsWith('DONE'))).toEqual(['DONE', `DONE.rejected-${result.runIds[0]}`].sort());
    const prompt2 = readFileSync(join(layout.runDir(PROJECT, task, result.runIds[1]), 'prompt.md'), 'utf8');
    expect(prompt2).toContain('## Completion criteria failed');
    expect(prompt2).toContain('Command: node --test sum.test.js');
    expect(prompt2).toMatch(/sum adds/);
    const prompt1 = readFileSync(join(layout.runDir(PROJECT, task, result.runIds[0]), 'prompt.md'), 'utf8');
    expect(prompt1).not.toContain('Completion criteria failed');
    const infos = runInfos(taskDir);
    expect(infos[0].criteria).toMatchObject({ passed: false, results: [{ command: 'node --test sum.test.js', exit_code: 1, passed: false }] });
    expect(infos[0].criteria?.results[0].output_tail).toContain('sum adds');
    expect(infos[1].criteria).toMatchObject({ passed: true, results: [{ command: 'node --test sum.test.js', exit_code: 0, passed: true }] });
    const bus = busMessages(layout.taskBus(PROJECT, task));
    const failed = bus.filter((m) => m.type === 'CRITERIA_FAILED');
    expect(failed).toHaveLength(1);
    expect(failed[0].run_id).toBe(result.runIds[0]);
    expect(failed[0].body).toContain('criterion "node --test sum.test.js" failed: exit code 1');
    expect(bus.map((m) => m.body)).toContain('completion criteria passed (1 command)');
    // the criteria are stored with the task's settings
    expect(readFileSync(join(taskDir, 'TASK-SETTINGS.yaml'), 'utf8')).toContain('done_criteria:\n    - command: "node --test sum.test.js"\n');
    // the completion FACT and the status row say what verified the DONE
    const fact = busMessages(layout.projectBus(PROJECT)).find((m) => m.meta?.kind === 'task_completion_propagation' && m.meta?.source_task_id === task);
    expect(fact?.meta).toMatchObject({ criteria_state: 'passed', criteria_commands: '1', criteria_rejected: '1', criteria_run_id: result.runIds[1] });
    expect(fact?.body).toContain('completion_criteria:\n- state: passed\n- rejected_done_count: 1\n- command: node --test sum.test.js');
    const row = buildStatusRow(layout, PROJECT, task, createLivenessProbe(), { enabled: false, driftAfterMs: 60_000 });
    expect(row.criteria).toMatchObject({ state: 'passed', rejected: 1, run_id: result.runIds[1], commands: [{ command: 'node --test sum.test.js' }] });
  });

  it('a command that cannot start fails closed: the task is not done, the restart budget runs out', async () => {
    const repo = buggyRepo(join(tmp.root, '..', 'repo-nocmd'));
    const task = taskId('nocmd');
    const result = await runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'x',
      config,
      agent: 'fixer',
      cwd: repo,
      restartDelayMs: 0,
      maxRestarts: 1,
      doneCriteria: validateDoneCriteria(['no-such-criteria-binary-xyz --check']),
      env: agentEnv(),
    });
    expect(result.status).toBe('failed');
    expect(result.error).toMatch(/^max restarts exceeded; last completion criteria failure: criterion "no-such-criteria-binary-xyz --check" failed: cannot start: command not found/);
    const taskDir = layout.taskDir(PROJECT, task);
    expect(existsSync(join(taskDir, 'DONE'))).toBe(false);
    expect(readdirSync(taskDir).filter((f) => f.startsWith('DONE.rejected-'))).toHaveLength(2);
    expect(busMessages(layout.taskBus(PROJECT, task)).filter((m) => m.type === 'CRITERIA_FAILED')).toHaveLength(2);
  });

  it('criteria requested but resolving to nothing never count as passed: the task fails before any attempt', async () => {
    const task = taskId('empty');
    const taskDir = layout.taskDir(PROJECT, task);
    mkdirSync(taskDir, { recursive: true });
    writeFileSync(join(taskDir, 'TASK-SETTINGS.yaml'), 'done_criteria: []\n');
    const result = await runTask({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', agent: 'claude', env: agentEnv({ FAKE_AGENT_DONE: '1' }) });
    expect(result.status).toBe('failed');
    expect(result.error).toMatch(/completion criteria cannot be resolved \(fail closed\): .*done_criteria is empty/);
    expect(result.runIds).toEqual([]);
    expect(existsSync(join(taskDir, 'DONE'))).toBe(false);

    const task2 = taskId('nulllist');
    const taskDir2 = layout.taskDir(PROJECT, task2);
    mkdirSync(taskDir2, { recursive: true });
    writeFileSync(join(taskDir2, 'TASK-SETTINGS.yaml'), 'done_criteria:\n');
    const result2 = await runTask({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task2, prompt: 'x', agent: 'claude', env: agentEnv({ FAKE_AGENT_DONE: '1' }) });
    expect(result2).toMatchObject({ status: 'failed', runIds: [] });
    expect(result2.error).toMatch(/completion criteria resolve to nothing \(fail closed\)/);
    // and the list runner itself never passes an empty list
    expect((await runCriteria([], { cwd: tmp.root, env: process.env })).passed).toBe(false);
    expect(() => validateDoneCriteria([])).toThrow('done_criteria is empty');
    expect(() => validateDoneCriteria(['  '])).toThrow('done criterion 1 is empty');
    expect(() => validateDoneCriteria([{ command: 'true', timeout: '0s' }])).toThrow('must be a duration between 1s and 24h');
  });

  it('a task without criteria is done on DONE as before (no criteria record, no criteria messages)', async () => {
    const task = taskId('plain');
    const result = await runTask({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', agent: 'claude', env: agentEnv({ FAKE_AGENT_DONE: '1' }) });
    expect(result.status).toBe('done');
    expect(runInfos(layout.taskDir(PROJECT, task))[0].criteria).toBeUndefined();
    expect(busMessages(layout.taskBus(PROJECT, task)).some((m) => /criteri/i.test(m.body) || m.type === 'CRITERIA_FAILED')).toBe(false);
  });

  it('while the criteria run the task is not done for anyone (DONE is held aside), and comes back when they pass', async () => {
    const task = taskId('held');
    const result = await runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'x',
      agent: 'claude',
      maxRestarts: 0,
      doneCriteria: validateDoneCriteria(['test ! -e "$JRUN_TASK_FOLDER/DONE" && test -e "$JRUN_TASK_FOLDER/DONE.checking"']),
      env: agentEnv({ FAKE_AGENT_DONE: '1' }),
    });
    expect(result.status).toBe('done');
    expect(readdirSync(layout.taskDir(PROJECT, task)).filter((f) => f.startsWith('DONE'))).toEqual(['DONE']);
  });

  it('a DONE held aside by a check that was cut short is checked again by the next loop', async () => {
    const task = taskId('resumecheck');
    const taskDir = layout.taskDir(PROJECT, task);
    mkdirSync(taskDir, { recursive: true });
    writeTaskSettings(taskDir, { done_criteria: validateDoneCriteria(['true']) });
    writeFileSync(join(taskDir, 'DONE.checking'), '');
    const result = await runTask({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', agent: 'claude', maxRestarts: 0, env: agentEnv() });
    expect(result).toMatchObject({ status: 'done', runIds: [] });
    expect(readdirSync(taskDir).filter((f) => f.startsWith('DONE'))).toEqual(['DONE']);
  });

  it('a timed-out criterion has its whole process group killed', async () => {
    const dir = join(tmp.root, '..', 'timeout');
    mkdirSync(dir, { recursive: true });
    const pidFile = join(dir, 'bg.pid');
    const r = await runCriterion({ command: `sleep 300 & echo $! > ${pidFile}; wait`, timeout_ms: 1000 }, { cwd: dir, env: process.env });
    expect(r).toMatchObject({ passed: false, timed_out: true, exit_code: -1 });
    const bg = Number(readFileSync(pidFile, 'utf8').trim());
    expect(bg).toBeGreaterThan(0);
    await waitFor('the background sleep of the criterion to die', () => !processAlive(bg));
  });

  it('settings written by one loop are used by the next: stored criteria apply without flags', async () => {
    const repo = buggyRepo(join(tmp.root, '..', 'repo-stored'));
    const task = taskId('stored');
    const taskDir = layout.taskDir(PROJECT, task);
    mkdirSync(taskDir, { recursive: true });
    writeTaskSettings(taskDir, { done_criteria: validateDoneCriteria([{ command: 'node --test sum.test.js', timeout: '2m' }]) });
    const result = await runTask({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', config, agent: 'fixer', cwd: repo, restartDelayMs: 0, maxRestarts: 0, env: agentEnv() });
    expect(result.status).toBe('failed');
    expect(runInfos(taskDir)[0].criteria?.passed).toBe(false);
  });
});
