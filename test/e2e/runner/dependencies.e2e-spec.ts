import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runTask } from '@app/runner';
import { RunsLayout, writeDependsOn, writeTaskPromptIfAbsent } from '@app/storage';
import { mkdirSync } from 'node:fs';
import { agentEnv, busTypesAndBodies, PROJECT, runInfos, taskId, tempRoot, waitFor } from './helpers';
import { loopParts } from '../../utils/loop-parts';

describe('task dependencies', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  afterAll(() => tmp.cleanup());

  it('a dependency cycle is rejected before anything runs', async () => {
    const a = taskId('cyc-a');
    const b = taskId('cyc-b');
    const dirA = layout.taskDir(PROJECT, a);
    mkdirSync(dirA, { recursive: true });
    writeTaskPromptIfAbsent(dirA, 'task a');
    writeDependsOn(dirA, [b]);
    await expect(
      runTask({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: b, prompt: 'task b', agent: 'claude', dependsOn: [a], env: agentEnv() }),
    ).rejects.toThrow(`dependency cycle detected: ${a} -> ${b} -> ${a}`);
    const dirB = layout.taskDir(PROJECT, b);
    expect(existsSync(join(dirB, 'runs'))).toBe(false);
    expect(existsSync(join(dirB, 'TASK.md'))).toBe(false);
    expect(existsSync(join(dirB, 'TASK-CONFIG.yaml'))).toBe(false);
  });

  it('a dependent task starts only after its dependency is DONE', async () => {
    const dep = taskId('dep');
    const main = taskId('main');
    const dependent = runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: main,
      prompt: 'after dep',
      agent: 'claude',
      dependsOn: [dep],
      dependencyPollIntervalMs: 50,
      env: agentEnv({ FAKE_AGENT_DONE: '1' }),
    });
    const mainBus = layout.taskBus(PROJECT, main);
    await waitFor(() => busTypesAndBodies(mainBus).includes(`PROGRESS task blocked by dependencies: ${dep}`));
    expect(runInfos(layout.taskDir(PROJECT, main))).toEqual([]);

    const depResult = await runTask({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: dep, prompt: 'dep', agent: 'codex', env: agentEnv({ FAKE_AGENT_DONE: '1' }) });
    expect(depResult.status).toBe('done');
    const doneAt = statSync(join(layout.taskDir(PROJECT, dep), 'DONE')).mtimeMs;

    const result = await dependent;
    expect(result.status).toBe('done');
    const [first] = runInfos(layout.taskDir(PROJECT, main));
    expect(first.start_time.getTime()).toBeGreaterThanOrEqual(Math.floor(doneAt));
    const bus = busTypesAndBodies(mainBus);
    expect(bus.slice(0, 3)).toEqual([
      `PROGRESS task blocked by dependencies: ${dep}`,
      'FACT dependencies satisfied; starting task',
      'INFO starting root agent (restart #0)',
    ]);
  }, 20_000);
});
