import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runJob } from '@app/runner';
import { RunsLayout, runState, writeRunInfo, ZERO_TIME } from '@app/storage';
import { waitFor } from '../../utils/wait';
import { agentEnv, busTypesAndBodies, PROJECT, runInfos, taskId, tempRoot } from './helpers';
import { loopParts } from '../../utils/loop-parts';

describe('memory-aware admission: defaults.min_available_memory (issue #33)', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  afterAll(() => tmp.cleanup());

  const meminfo = join(tmp.root, '..', 'meminfo');
  const setAvailable = (kb: number): void => writeFileSync(meminfo, `MemTotal:       16000000 kB\nMemAvailable:   ${kb} kB\n`);
  const config = { agents: {}, defaults: { agent: '', timeout: 0, max_concurrent_runs: 0, max_concurrent_root_tasks: 0, min_available_memory: 2 * 1024 ** 3 } };

  it('a run waits below the floor, says so once on the bus, and starts its agent when memory comes back', async () => {
    setAvailable(1024 * 1024);
    const task = taskId('mem');
    const bus = join(layout.taskDir(PROJECT, task), 'TASK-MESSAGE-BUS.md');
    const job = runJob({
      ...loopParts,
      root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', agent: 'claude', config: config as never,
      env: agentEnv({ CONDUCTOR_MEMINFO_PATH: meminfo }), memoryPollMs: 20,
    });
    await waitFor('the waiting INFO', () => busTypesAndBodies(bus).some((l) => l.startsWith('INFO waiting for memory')));
    expect(busTypesAndBodies(bus)).toEqual(['INFO waiting for memory: available 1 GiB < floor 2 GiB (defaults.min_available_memory)']);
    // no agent was started; the root run's record says it is queued, and why
    const waiting = await waitFor('the root run marked queued', () => runInfos(layout.taskDir(PROJECT, task)).find((i) => !!i.queued_reason));
    expect(waiting.queued_reason).toBe('queued: waiting for memory: available 1 GiB < floor 2 GiB (defaults.min_available_memory)');
    expect(runState(waiting)).toBe('queued');
    expect(waiting).toMatchObject({ pid: process.pid, starting: true });
    setAvailable(3 * 1024 * 1024);
    const result = await job;
    expect(result.ok).toBe(true);
    expect(result.info?.pid).toBeGreaterThan(0);
    expect(runInfos(layout.taskDir(PROJECT, task))).toEqual([expect.objectContaining({ status: 'completed', run_id: waiting.run_id })]);
    expect(runInfos(layout.taskDir(PROJECT, task))[0].queued_reason).toBeUndefined();
    const lines = busTypesAndBodies(bus);
    expect(lines.filter((l) => l.startsWith('INFO waiting for memory'))).toHaveLength(1);
    expect(lines).toContain('INFO memory available: 3 GiB >= floor 2 GiB; starting');
  });

  it('a child run waiting for memory shows queued with the reason in its record, cleared when it starts', async () => {
    setAvailable(1024 * 1024);
    const parentTask = taskId('memparent');
    const { runId: parent, dir } = layout.allocateRunDir(PROJECT, parentTask);
    writeRunInfo(join(dir, 'run-info.yaml'), {
      version: 1, run_id: parent, project_id: PROJECT, task_id: parentTask, agent: 'claude', pid: 0, pgid: 0,
      start_time: new Date(), end_time: ZERO_TIME, exit_code: -1, status: 'running', agent_version: '',
    });
    const task = taskId('memchild');
    const job = runJob({
      ...loopParts,
      root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', agent: 'claude', config: config as never, parentRunId: parent,
      env: agentEnv({ CONDUCTOR_MEMINFO_PATH: meminfo }), memoryPollMs: 20,
    });
    await waitFor('the child marked queued', () => runInfos(layout.taskDir(PROJECT, task)).some((i) => !!i.queued_reason));
    const [info] = runInfos(layout.taskDir(PROJECT, task));
    expect(info.queued_reason).toBe('queued: waiting for memory: available 1 GiB < floor 2 GiB (defaults.min_available_memory)');
    expect(runState(info)).toBe('queued');
    setAvailable(3 * 1024 * 1024);
    const result = await job;
    expect(result.ok).toBe(true);
    expect(runInfos(layout.taskDir(PROJECT, task))[0]).toMatchObject({ status: 'completed' });
    expect(runInfos(layout.taskDir(PROJECT, task))[0].queued_reason).toBeUndefined();
  });

  it('an abort ends the wait without starting the agent', async () => {
    setAvailable(1024);
    const task = taskId('memstop');
    const bus = join(layout.taskDir(PROJECT, task), 'TASK-MESSAGE-BUS.md');
    const ctl = new AbortController();
    const job = runJob({
      ...loopParts,
      root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', agent: 'claude', config: config as never,
      env: agentEnv({ CONDUCTOR_MEMINFO_PATH: meminfo }), memoryPollMs: 20, signal: ctl.signal,
    });
    await waitFor('the waiting INFO', () => busTypesAndBodies(bus).some((l) => l.startsWith('INFO waiting for memory')));
    ctl.abort('test stop');
    const result = await job;
    expect(result.ok).toBe(false);
    expect(result.error).toBe('stopped while waiting for memory: test stop');
    // the queued record is finalised, never left `running` for a runner that went on
    expect(runInfos(layout.taskDir(PROJECT, task))).toEqual([expect.objectContaining({ status: 'failed', error_summary: 'stopped while waiting for memory: test stop' })]);
    expect(runInfos(layout.taskDir(PROJECT, task))[0].queued_reason).toBeUndefined();
  });
});
