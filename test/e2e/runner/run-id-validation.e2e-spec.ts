import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runJob } from '@app/runner';
import { agentEnv, cliEnv, PROJECT, RUN_AGENT, taskId } from './helpers';
import { loopParts } from '../../utils/loop-parts';

/**
 * D18: parent and previous run ids are validated before anything is written (they end up in
 * run-info.yaml and are followed as a chain); other bad job input also changes nothing.
 */
describe('run ids given to job and wrap', () => {
  let dir: string;
  let root: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'run-id-validation-'));
    root = join(dir, 'runs');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['parentRunId', '../escape'],
    ['parentRunId', '/abs'],
    ['previousRunId', 'a/b'],
    ['previousRunId', '..'],
  ])('runJob refuses %s %j and writes nothing', async (key, value) => {
    const task = taskId('ids');
    const result = await runJob({ ...loopParts, root, projectId: PROJECT, taskId: task, prompt: 'x', agent: 'claude', env: agentEnv(), [key]: value });
    expect(result).toMatchObject({ ok: false, error: expect.stringContaining(`invalid run ID "${value}"`) });
    expect(existsSync(root)).toBe(false);
  });

  it('an unknown agent or a missing --cwd refuses the job before the task folder exists', async () => {
    const unknown = await runJob({ ...loopParts, root, projectId: PROJECT, taskId: taskId('agent'), prompt: 'x', agent: 'nosuch', env: agentEnv() });
    expect(unknown).toMatchObject({ ok: false, error: expect.stringContaining('unknown agent type "nosuch"') });
    const noCwd = await runJob({ ...loopParts, root, projectId: PROJECT, taskId: taskId('cwd'), prompt: 'x', agent: 'claude', cwd: join(dir, 'missing'), env: agentEnv() });
    expect(noCwd).toMatchObject({ ok: false, error: expect.stringContaining('working directory does not exist') });
    expect(existsSync(root)).toBe(false);
  });

  it.each([
    ['job --parent-run-id', ['job', '--agent', 'claude', '--prompt', 'x', '--parent-run-id', '../x'], {}, '../x'],
    ['job with $JRUN_ID', ['job', '--agent', 'claude', '--prompt', 'x'], { JRUN_ID: '../../x' }, '../../x'],
    ['job --previous-run-id', ['job', '--agent', 'claude', '--prompt', 'x', '--previous-run-id', 'a/b'], {}, 'a/b'],
    ['wrap with $JRUN_ID', ['wrap', '--agent', 'true'], { JRUN_ID: '../x' }, '../x'],
  ])('run-agent %s: one-line error, exit 2 (invalid input), nothing written', (_name, args, env, bad) => {
    const r = spawnSync(process.execPath, [RUN_AGENT, ...args, '--root', root, '--project', PROJECT, '--task', taskId('cli')], {
      env: cliEnv(dir, env),
      cwd: dir,
      encoding: 'utf8',
    });
    expect([r.status, r.stdout, r.stderr]).toEqual([
      2,
      '',
      `Error: invalid run ID "${bad}": must be a single folder name without path separators, "..", or glob characters\n`,
    ]);
    expect(existsSync(root)).toBe(false);
  });
});
