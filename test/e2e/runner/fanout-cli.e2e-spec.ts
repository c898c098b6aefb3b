import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { childQueueBase, takeTurn, validateTaskSettings, writeTaskSettings } from '@app/runner';
import { RunsLayout, writeRunInfo, ZERO_TIME } from '@app/storage';
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

  it('with --no-wait, a sub-agent job refused by max_children_per_run is one line, exit 2, and no run folder', async () => {
    const rootTask = taskId('kids');
    const seed = (task: string, parent?: string) => {
      const { runId, dir } = layout.allocateRunDir(PROJECT, task);
      writeRunInfo(join(dir, 'run-info.yaml'), {
        version: 1, run_id: runId, parent_run_id: parent, project_id: PROJECT, task_id: task, agent: 'claude', pid: 0, pgid: 0,
        start_time: new Date(), end_time: ZERO_TIME, exit_code: -1, status: 'running', agent_version: '',
      });
      return runId;
    };
    const parent = seed(rootTask);
    seed(taskId('k1'), parent);
    writeTaskSettings(layout.taskDir(PROJECT, rootTask), validateTaskSettings({ max_children_per_run: 1 }));
    // the parent's one place is held (its flock'd slot, as a running child's runner holds it)
    const place = await takeTurn({ root: tmp.root, limit: 1, runId: 'holder', queueBase: childQueueBase(tmp.root, parent) }, {});
    expect(place).toBeDefined();
    const child = taskId('k2');
    const r = await runCli(['job', '--root', tmp.root, '--project', PROJECT, '--task', child, '--parent-run-id', parent, '--prompt', 'x', '--agent', 'claude', '--no-wait'], { env: cliEnv(home), cwd: home });
    place!.release();
    expect([r.code, r.stderr.trim()]).toEqual([2, `Error: children per run limit (1) reached: run ${parent} has 1 running children (limit set by max_children_per_run of task ${rootTask}); not queued (--no-wait)`]);
    const runs = join(layout.taskDir(PROJECT, child), 'runs');
    expect(existsSync(runs) ? readdirSync(runs) : []).toEqual([]);
  });
});
