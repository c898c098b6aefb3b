import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runTask, stopRun } from '@app/runner';
import { RunsLayout } from '@app/storage';
import { agentEnv, busMessages, busTypesAndBodies, processAlive, PROJECT, runInfos, SUITE_AGENTS, taskId, tempRoot, waitFor } from './helpers';
import { loopParts } from '../../utils/loop-parts';

// Spawns the built CLI (bin/run-agent job) from inside an agent: build first (`npx nest build cli`).
describe('DONE with live child runs', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  const config = { agents: { spawner: { name: 'spawner', type: 'command', command: join(SUITE_AGENTS, 'spawn-child-then-done') } } } as never;
  afterAll(() => tmp.cleanup());

  it('waits for the child without restarting the root, then completes', async () => {
    const task = taskId('child-wait');
    const result = await runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'delegate',
      config,
      childPollIntervalMs: 50,
      env: agentEnv({ CHILD_SLEEP_MS: '1500', HOME: tmp.root }),
    });
    expect(result.status).toBe('done');
    expect(result.runIds).toHaveLength(1);
    const infos = runInfos(layout.taskDir(PROJECT, task));
    const child = infos.find((i) => i.parent_run_id);
    expect(infos.filter((i) => !i.parent_run_id)).toHaveLength(1);
    expect(child).toMatchObject({ parent_run_id: result.runIds[0], status: 'completed', agent: 'claude' });
    const bus = busTypesAndBodies(layout.taskBus(PROJECT, task));
    expect(bus).toContain(`INFO waiting for 1 children to complete: [${child!.run_id}]`);
    expect(bus).toContain('INFO task completed (all children finished)');
    const messages = busMessages(layout.taskBus(PROJECT, task));
    const childStop = messages.findIndex((m) => m.type === 'RUN_STOP' && m.run_id === child!.run_id);
    const completed = messages.findIndex((m) => m.body === 'task completed (all children finished)');
    expect(childStop).toBeGreaterThan(-1);
    expect(childStop).toBeLessThan(completed);
  }, 20_000);

  it('a parent that backgrounds a child job and writes DONE at once waits for that child (issue #11)', async () => {
    const task = taskId('child-at-once');
    const atOnce = { agents: { spawner: { name: 'spawner', type: 'command', command: join(SUITE_AGENTS, 'spawn-child-done-at-once') } } } as never;
    const result = await runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'delegate and finish',
      config: atOnce,
      childPollIntervalMs: 50,
      env: agentEnv({ CHILD_SLEEP_MS: '1000', HOME: tmp.root }),
    });
    expect(result.status).toBe('done');
    const infos = runInfos(layout.taskDir(PROJECT, task));
    const child = infos.find((i) => i.parent_run_id);
    expect(child).toMatchObject({ parent_run_id: result.runIds[0], status: 'completed' });
    const messages = busMessages(layout.taskBus(PROJECT, task));
    expect(messages.some((m) => m.type === 'INFO' && m.body.startsWith('waiting for 1 children to complete'))).toBe(true);
    const childStop = messages.findIndex((m) => m.type === 'RUN_STOP' && m.run_id === child!.run_id);
    const completed = messages.findIndex((m) => m.body === 'task completed (all children finished)');
    expect(childStop).toBeGreaterThan(-1);
    expect(childStop).toBeLessThan(completed);
    // the marker was removed once the child's run existed
    expect(existsSync(join(layout.runsDir(PROJECT, task), result.runIds[0], 'pending-children', String(child!.pid)))).toBe(false);
  });

  it('a child that outlives the child-wait timeout: completes with a WARNING', async () => {
    const task = taskId('child-timeout');
    const result = await runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'delegate',
      config,
      childWaitTimeoutMs: 300,
      childPollIntervalMs: 50,
      env: agentEnv({ CHILD_SLEEP_MS: '30000', HOME: tmp.root }),
    });
    expect(result.status).toBe('done');
    const infos = runInfos(layout.taskDir(PROJECT, task));
    const child = infos.find((i) => i.parent_run_id)!;
    const bus = busTypesAndBodies(layout.taskBus(PROJECT, task));
    expect(bus).toContain(`WARNING timeout waiting for children after 300ms: [${child.run_id}]`);
    expect(bus.some((l) => l.startsWith('FACT task completion facts propagated'))).toBe(true);
    await stopRun(join(layout.runsDir(PROJECT, task), child.run_id), { graceMs: 1000 });
  }, 20_000);

  it('D6: stopping the root run also stops its child run (own process group) and ends the loop', async () => {
    const task = taskId('child-stop');
    const taskDir = layout.taskDir(PROJECT, task);
    const loop = runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'delegate and wait',
      config,
      env: agentEnv({ CHILD_SLEEP_MS: '60000', STAY_ALIVE_S: '60', HOME: tmp.root }),
    });
    const [rootRun, childRun] = await waitFor(() => {
      const infos = runInfos(taskDir);
      const r = infos.find((i) => !i.parent_run_id && i.commandline);
      const c = infos.find((i) => i.parent_run_id && i.commandline);
      return r && c ? [r, c] : undefined;
    }, 20_000);
    expect(childRun.pgid).not.toBe(rootRun.pgid);
    const stopped = await stopRun(join(layout.runsDir(PROJECT, task), rootRun.run_id), { graceMs: 1000, stoppedBy: 'the test' });
    expect(stopped.stopped).toBe(true);
    expect([rootRun.pid, childRun.pid].filter(processAlive)).toEqual([]);
    const result = await loop;
    expect(result.status).toBe('stopped');
    expect(result.runIds).toEqual([rootRun.run_id]);
    const child = runInfos(taskDir).find((i) => i.run_id === childRun.run_id)!;
    expect(child.status).toBe('failed');
    expect(child.error_summary).toMatch(/^stopped by the test/);
  }, 30_000);
});
