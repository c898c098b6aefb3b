import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { runJob, runTask } from '@app/runner';
import { RunsLayout, writeRunInfo } from '@app/storage';
import { agentEnv, busTypesAndBodies, processAlive, PROJECT, readJson, runInfos, taskId, tempRoot } from './helpers';
import { loopParts } from '../../utils/loop-parts';

describe('job limits and policies', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  afterAll(() => tmp.cleanup());

  it('D13: a delegation chain deeper than the limit is refused with a clear error, nothing allocated', async () => {
    const task = taskId('depth');
    let parent: string | undefined;
    for (let i = 0; i < 4; i++) {
      const { runId, dir } = layout.allocateRunDir(PROJECT, task);
      writeRunInfo(join(dir, 'run-info.yaml'), {
        version: 1, run_id: runId, parent_run_id: parent, project_id: PROJECT, task_id: task, agent: 'claude',
        pid: 0, pgid: 0, start_time: new Date(), end_time: new Date(), exit_code: 0, status: 'completed', agent_version: '',
      });
      parent = runId;
    }
    const before = readdirSync(layout.runsDir(PROJECT, task)).length;
    const refused = await runJob({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', agent: 'claude', parentRunId: parent, maxDelegationDepth: 4, env: agentEnv() });
    expect(refused.ok).toBe(false);
    expect(refused.fatal).toBe(true);
    expect(refused.error).toBe(`delegation depth limit (4) exceeded: a child of run ${parent} would be at depth 5`);
    expect(readdirSync(layout.runsDir(PROJECT, task))).toHaveLength(before);
    const allowed = await runJob({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', agent: 'claude', parentRunId: parent, maxDelegationDepth: 5, env: agentEnv() });
    expect(allowed.ok).toBe(true);
  });

  it('D3: diversification rotates across the attempts of a task', async () => {
    const config = {
      agents: { a: { name: 'a', type: 'claude' }, b: { name: 'b', type: 'codex' } },
      defaults: { agent: '', timeout: 0, max_concurrent_runs: 0, max_concurrent_root_tasks: 0, diversification: { enabled: true, strategy: 'round-robin', agents: ['a', 'b'], weights: [], fallback_on_failure: false } },
    } as never;
    const task = taskId('rotate');
    const result = await runTask({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', config, maxRestarts: 2, restartDelayMs: 0, env: agentEnv() });
    expect(result.runIds).toHaveLength(3);
    expect(runInfos(layout.taskDir(PROJECT, task)).map((i) => i.agent)).toEqual(['claude', 'codex', 'claude']);
    const job = await runJob({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', config, env: agentEnv() });
    expect(job.info?.agent).toBe('codex');
  });

  it('D3: fallback_on_failure retries once with the next agent in a fresh run folder', async () => {
    const config = {
      agents: { a: { name: 'a', type: 'gemini' }, b: { name: 'b', type: 'codex' } },
      defaults: { agent: '', timeout: 0, max_concurrent_runs: 0, max_concurrent_root_tasks: 0, diversification: { enabled: true, strategy: 'round-robin', agents: ['a', 'b'], weights: [], fallback_on_failure: true } },
    } as never;
    const task = taskId('fallback');
    const result = await runJob({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', config, env: agentEnv({ FAKE_AGENT_REJECT_STREAM_JSON: '1' }) });
    expect(result.ok).toBe(true);
    expect(runInfos(layout.taskDir(PROJECT, task)).map((i) => [i.agent, i.status])).toEqual([
      ['gemini', 'failed'],
      ['codex', 'completed'],
    ]);
  });

  it('idle-output timeout kills the whole group, records "timed out" and posts WARN after RUN_CRASH', async () => {
    const task = taskId('idle');
    // The idle timer runs from the spawn: 3 s leaves a loaded machine time to start the agent and
    // its grandchildren (a 300 ms timeout could fire before the agent existed, issue #13 item 8).
    const result = await runJob({
      ...loopParts,
      root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', agent: 'claude', idleTimeoutMs: 3000,
      env: agentEnv({ FAKE_AGENT_SLEEP_MS: '30000', FAKE_AGENT_SPAWN_GRANDCHILDREN: '2' }),
    });
    expect(result.ok).toBe(false);
    expect(result.info).toMatchObject({ status: 'failed', exit_code: 137, error_summary: 'timed out' });
    const bus = busTypesAndBodies(layout.taskBus(PROJECT, task));
    expect(bus.slice(-2)).toEqual(['RUN_CRASH run stopped with code 137', 'WARN agent job timed out after 3s of idle output']);
    const pids = readJson<{ pid: number; grandchildren: { pid: number }[] }>(join(result.runDir, 'fake-agent-pids.json'));
    expect(pids.grandchildren).toHaveLength(2);
    expect([pids.pid, ...pids.grandchildren.map((g) => g.pid)].filter(processAlive)).toEqual([]);
  }, 30_000);
});
