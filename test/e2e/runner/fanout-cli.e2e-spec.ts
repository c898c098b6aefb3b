import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { RunsLayout } from '@app/storage';
import { runCli } from '../../utils/cli';
import { cliEnv, PROJECT, taskId, tempRoot } from './helpers';

describe('run-agent task --max-runs-per-tree / --max-children-per-run (fan-out governor, issue #33)', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  const home = join(tmp.root, '..', 'home');
  beforeAll(() => mkdirSync(home, { recursive: true }));
  afterAll(() => tmp.cleanup());

  it('a bad limit is one line, exit 2, and no task folder', async () => {
    const task = taskId('badlimit');
    const r = await runCli(['task', '--root', tmp.root, '--project', PROJECT, '--task', task, '--prompt', 'x', '--agent', 'claude', '--max-runs-per-tree', '0'], { env: cliEnv(home), cwd: home });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('Error: max runs per tree must be a whole number from 1 to 100000, got "0"');
    expect(existsSync(layout.taskDir(PROJECT, task))).toBe(false);
  });
});
