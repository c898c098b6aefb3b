import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalTaskDispatcher, RunnerService, runTask, stopRun, stopTask } from '@app/runner';
import { RunsLayout } from '@app/storage';
import { agentEnv, busTypesAndBodies, PROJECT, processAlive, readJson, runInfos, taskId, tempRoot, waitFor } from './helpers';
import { loopParts } from '../../utils/loop-parts';

interface Pids {
  pid: number;
  grandchildren: { pid: number; detached: boolean }[];
}

const GRACE_MS = 1000;

describe('D6: stop means stop', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  afterAll(() => tmp.cleanup());

  async function startStubbornTask(task: string) {
    const loop = runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'run forever',
      agent: 'claude',
      restartDelayMs: 0,
      env: agentEnv({ FAKE_AGENT_IGNORE_SIGTERM: '1', FAKE_AGENT_SPAWN_GRANDCHILDREN: '2', FAKE_AGENT_SLEEP_MS: '60000', FAKE_AGENT_GRANDCHILD_SLEEP_S: '60' }),
    });
    const runDir = await waitFor(() => {
      const runs = runInfos(layout.taskDir(PROJECT, task));
      const dir = runs[0] && join(layout.runsDir(PROJECT, task), runs[0].run_id);
      return dir && existsSync(join(dir, 'fake-agent-pids.json')) ? dir : undefined;
    });
    const pids = readJson<Pids>(join(runDir, 'fake-agent-pids.json'));
    const all = [pids.pid, ...pids.grandchildren.map((g) => g.pid)];
    expect(pids.grandchildren.some((g) => g.detached)).toBe(true);
    expect(all.every(processAlive)).toBe(true);
    return { loop, runDir, all };
  }

  it('stopTask: an agent ignoring SIGTERM and its grandchildren (one in its own session) are gone; no restart', async () => {
    const task = taskId('stoptask');
    const { loop, runDir, all } = await startStubbornTask(task);
    const stopped = await stopTask(layout.taskDir(PROJECT, task), { graceMs: GRACE_MS, stoppedBy: 'the test' });
    expect(stopped.stoppedRuns).toBe(1);
    expect(all.filter(processAlive)).toEqual([]);
    const result = await loop;
    expect(result.status).toBe('stopped');
    expect(result.runIds).toHaveLength(1);
    const info = runInfos(layout.taskDir(PROJECT, task))[0];
    expect(info).toMatchObject({ status: 'failed', exit_code: 137 });
    expect(info.error_summary).toBe('stopped by the test (SIGKILL)');
    expect(readFileSync(join(runDir, 'STOPPED-BY'), 'utf8')).toBe('the test\n');
    const bus = busTypesAndBodies(layout.taskBus(PROJECT, task));
    expect(bus.filter((l) => l.startsWith('INFO starting root agent'))).toHaveLength(1);
    expect(bus).toContain('RUN_CRASH run stopped with code 137');
    expect(bus[bus.length - 1]).toMatch(/^INFO task stopped: /);
  }, 15_000);

  it('stopRun on the run alone also ends the loop, and a second stop reports it is not running', async () => {
    const task = taskId('stoprun');
    const { loop, runDir, all } = await startStubbornTask(task);
    const stopped = await stopRun(runDir, { graceMs: GRACE_MS });
    expect(stopped.stopped).toBe(true);
    expect(all.filter(processAlive)).toEqual([]);
    const result = await loop;
    expect(result.status).toBe('stopped');
    expect(result.runIds).toHaveLength(1);
    const again = await stopRun(runDir, { graceMs: GRACE_MS });
    expect(again).toMatchObject({ stopped: false, status: 'failed' });
  }, 15_000);

  it('aborting the loop (Ctrl-C of the CLI) stops the agent group; SIGTERM honoured gives 143', async () => {
    const task = taskId('abort');
    const controller = new AbortController();
    const loop = runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'x',
      agent: 'codex',
      signal: controller.signal,
      stopGraceMs: GRACE_MS,
      env: agentEnv({ FAKE_AGENT_SPAWN_GRANDCHILDREN: '2', FAKE_AGENT_SLEEP_MS: '60000' }),
    });
    const runDir = await waitFor(() => {
      const runs = runInfos(layout.taskDir(PROJECT, task));
      const dir = runs[0] && join(layout.runsDir(PROJECT, task), runs[0].run_id);
      return dir && existsSync(join(dir, 'fake-agent-pids.json')) ? dir : undefined;
    });
    const pids = readJson<Pids>(join(runDir, 'fake-agent-pids.json'));
    controller.abort('run-agent received SIGINT');
    const result = await loop;
    expect(result.status).toBe('stopped');
    expect([pids.pid, ...pids.grandchildren.map((g) => g.pid)].filter(processAlive)).toEqual([]);
    const info = runInfos(layout.taskDir(PROJECT, task))[0];
    expect(info).toMatchObject({ status: 'failed', exit_code: 143, error_summary: 'stopped by run-agent received SIGINT (SIGTERM)' });
  }, 15_000);

  it('the local TaskDispatcher and RunnerService shutdown stop what they started', async () => {
    const task = taskId('dispatch');
    const dispatched = new LocalTaskDispatcher((o) => runTask({ ...o, ...loopParts })).dispatch({
      root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', agent: 'gemini', stopGraceMs: GRACE_MS,
      env: agentEnv({ FAKE_AGENT_SLEEP_MS: '60000' }),
    });
    const info = await waitFor(() => runInfos(layout.taskDir(PROJECT, task)).find((i) => i.commandline));
    dispatched.abort('dispatcher abort');
    await expect(dispatched.result).resolves.toMatchObject({ status: 'stopped', runIds: [info.run_id] });
    expect(processAlive(info.pid)).toBe(false);

    const service = new RunnerService(loopParts);
    const task2 = taskId('service');
    const running = service.runJob({ root: tmp.root, projectId: PROJECT, taskId: task2, prompt: 'x', agent: 'claude', stopGraceMs: GRACE_MS, env: agentEnv({ FAKE_AGENT_SLEEP_MS: '60000' }) });
    const info2 = await waitFor(() => runInfos(layout.taskDir(PROJECT, task2)).find((i) => i.commandline));
    expect(service.activeCount).toBe(1);
    await service.onApplicationShutdown('SIGTERM');
    const result = await running;
    expect(result.info).toMatchObject({ status: 'failed', exit_code: 143 });
    expect(result.info?.error_summary).toMatch(/^stopped by run-agent \(pid \d+\) received SIGTERM/);
    expect(processAlive(info2.pid)).toBe(false);
    expect(service.activeCount).toBe(0);
  }, 15_000);
});
