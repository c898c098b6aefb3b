import { join } from 'node:path';
import { runJob, validateTaskSettings, writeTaskSettings } from '@app/runner';
import { RunsLayout, writeRunInfo } from '@app/storage';
import { agentEnv, PROJECT, taskId, tempRoot } from './helpers';
import { loopParts } from '../../utils/loop-parts';

describe('fan-out governor: configurable delegation depth (issue #33)', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  afterAll(() => tmp.cleanup());

  /** A chain of `n` finished runs, each the child of the one before, spread over one task per run. */
  function chain(n: number, slug: string): { tasks: string[]; last: string } {
    const tasks: string[] = [];
    let parent: string | undefined;
    for (let i = 0; i < n; i++) {
      const task = taskId(`${slug}${i}`);
      tasks.push(task);
      const { runId, dir } = layout.allocateRunDir(PROJECT, task);
      writeRunInfo(join(dir, 'run-info.yaml'), {
        version: 1, run_id: runId, parent_run_id: parent, project_id: PROJECT, task_id: task, agent: 'claude',
        pid: 0, pgid: 0, start_time: new Date(), end_time: new Date(), exit_code: 0, status: 'completed', agent_version: '',
      });
      parent = runId;
    }
    return { tasks, last: parent! };
  }
  const child = (parentRunId: string, config?: unknown) =>
    runJob({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: taskId('child'), prompt: 'x', agent: 'claude', parentRunId, config: config as never, env: agentEnv() });

  it('a root task\'s max_delegation_depth holds for its whole sub-tree, naming where it was set', async () => {
    const { tasks, last } = chain(3, 'tree');
    writeTaskSettings(layout.taskDir(PROJECT, tasks[0]), validateTaskSettings({ max_delegation_depth: 3 }));
    const refused = await child(last);
    expect(refused.ok).toBe(false);
    expect(refused.error).toBe(`delegation depth limit (3) exceeded: a child of run ${last} would be at depth 4 (limit set by max_delegation_depth of task ${tasks[0]})`);
    // the same chain under the default limit (16) is fine
    const other = chain(3, 'free');
    expect((await child(other.last)).ok).toBe(true);
  });

  it('config defaults.max_delegation_depth replaces the constant 16', async () => {
    const { last } = chain(2, 'cfg');
    const config = { agents: {}, defaults: { agent: '', timeout: 0, max_concurrent_runs: 0, max_concurrent_root_tasks: 0, max_delegation_depth: 2 } };
    const refused = await child(last, config);
    expect(refused.error).toBe(`delegation depth limit (2) exceeded: a child of run ${last} would be at depth 3 (limit set by config defaults.max_delegation_depth)`);
    expect((await child(last, { ...config, defaults: { ...config.defaults, max_delegation_depth: 3 } })).ok).toBe(true);
  });

  it('bad limits are refused by the one validator', () => {
    expect(() => validateTaskSettings({ max_delegation_depth: 0 })).toThrow('max delegation depth must be a whole number from 1 to 1000, got 0');
    expect(() => validateTaskSettings({ max_delegation_depth: '1001' })).toThrow('got "1001"');
    expect(validateTaskSettings({ max_delegation_depth: '7' })).toEqual({ max_delegation_depth: 7 });
  });
});
