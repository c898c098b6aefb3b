import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESTART_PREFIX, runTask } from '@app/runner';
import { RunsLayout } from '@app/storage';
import { agentEnv, busMessages, busTypesAndBodies, PROJECT, runInfos, SUITE_AGENTS, taskId, tempRoot } from './helpers';
import { loopParts } from '../../utils/loop-parts';

describe('runTask: the Ralph loop', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  afterAll(() => tmp.cleanup());

  it('DONE on the third attempt: three runs chained by previous_run_id, restart prefix on attempts 2 and 3', async () => {
    const task = taskId('third');
    const result = await runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'write the feature',
      agent: 'claude',
      restartDelayMs: 10,
      env: agentEnv({ FAKE_AGENT_DONE_ON_ATTEMPT: '3' }),
    });
    expect(result.status).toBe('done');
    expect(result.runIds).toHaveLength(3);
    const infos = runInfos(layout.taskDir(PROJECT, task));
    expect(infos.map((i) => i.run_id)).toEqual(result.runIds);
    expect(infos.map((i) => i.previous_run_id)).toEqual([undefined, result.runIds[0], result.runIds[1]]);
    expect(infos.every((i) => i.status === 'completed' && i.exit_code === 0)).toBe(true);
    const prompts = result.runIds.map((id) => readFileSync(join(layout.runDir(PROJECT, task, id), 'prompt.md'), 'utf8'));
    expect(prompts[0].endsWith('\n---\n\nwrite the feature\n')).toBe(true);
    expect(prompts[1].endsWith(`\n---\n\n${RESTART_PREFIX}write the feature\n`)).toBe(true);
    expect(prompts[2].endsWith(`\n---\n\n${RESTART_PREFIX}write the feature\n`)).toBe(true);
    const bus = busTypesAndBodies(layout.taskBus(PROJECT, task));
    expect(bus.filter((l) => l.startsWith('INFO starting root agent'))).toEqual([
      'INFO starting root agent (restart #0)',
      'INFO starting root agent (restart #1)',
      'INFO starting root agent (restart #2)',
    ]);
    expect(bus).toContain('INFO task completed (DONE marker present, no active children)');
    expect(bus[bus.length - 1]).toMatch(/^FACT task completion facts propagated to project bus \(msg_id=MSG-/);
  });

  it('D2: --max-restarts 2 means three attempts, then ERROR; 0 runs the agent once', async () => {
    const task = taskId('budget');
    const result = await runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'never done',
      agent: 'codex',
      maxRestarts: 2,
      restartDelayMs: 0,
      env: agentEnv({ FAKE_AGENT_EXIT: '1' }),
    });
    expect(result).toMatchObject({ status: 'failed', error: 'max restarts exceeded' });
    expect(result.runIds).toHaveLength(3);
    const bus = busTypesAndBodies(layout.taskBus(PROJECT, task));
    expect(bus.filter((l) => l.startsWith('WARNING root agent failed on restart #'))).toHaveLength(3);
    expect(bus[bus.length - 1]).toBe('ERROR task failed: max restarts (2) exceeded');

    const once = taskId('once');
    const single = await runTask({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: once, prompt: 'x', agent: 'codex', maxRestarts: 0, env: agentEnv() });
    expect(single.status).toBe('failed');
    expect(single.runIds).toHaveLength(1);
  });

  it('a successful attempt without DONE is restarted', async () => {
    const task = taskId('nodone');
    const result = await runTask({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', agent: 'gemini', maxRestarts: 1, restartDelayMs: 0, env: agentEnv() });
    expect(result.runIds).toHaveLength(2);
    expect(runInfos(layout.taskDir(PROJECT, task)).map((i) => i.status)).toEqual(['completed', 'completed']);
  });

  it('D1: a missing agent binary ends the task at once with ERROR, no retries', async () => {
    const task = taskId('nobin');
    const result = await runTask({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'x',
      agent: 'claude',
      restartDelayMs: 1000,
      env: { PATH: SUITE_AGENTS },
    });
    expect(result.status).toBe('failed');
    expect(result.error).toMatch(/agent cli "claude" not found in PATH/);
    expect(result.runIds).toEqual([]);
    const bus = busTypesAndBodies(layout.taskBus(PROJECT, task));
    expect(bus).toEqual(['INFO starting root agent (restart #0)', expect.stringMatching(/^ERROR task failed: .*not found in PATH/)]);
  });

  it('D1: a binary without execute permission and an unsupported agent type are fatal too', async () => {
    const bin = join(tmp.root, '..', 'noexec-bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'claude'), '#!/bin/sh\necho hi\n');
    chmodSync(join(bin, 'claude'), 0o644);
    const task = taskId('noexec');
    const denied = await runTask({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', agent: 'claude', env: { PATH: bin } });
    expect(denied.status).toBe('failed');
    expect(denied.error).toMatch(/permission denied/);
    expect(busMessages(layout.taskBus(PROJECT, task)).filter((m) => m.type === 'INFO')).toHaveLength(1);

    const config = { agents: { weird: { name: 'weird', type: 'foo' } } } as never;
    const task2 = taskId('badtype');
    const unsupported = await runTask({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task2, prompt: 'x', config, env: agentEnv() });
    expect(unsupported.status).toBe('failed');
    expect(unsupported.error).toBe('unsupported agent type "foo"');
  });

  it('D4: the completion FACT is posted once; re-running the finished task does not post it again', async () => {
    const task = taskId('fact');
    const first = await runTask({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', agent: 'claude', env: agentEnv({ FAKE_AGENT_DONE: '1' }) });
    expect(first.status).toBe('done');
    const again = await runTask({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, agent: 'claude', env: agentEnv() });
    expect(again).toMatchObject({ status: 'done', runIds: [] });
    await runTask({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, agent: 'claude', env: agentEnv() });
    const facts = busMessages(layout.projectBus(PROJECT)).filter((m) => m.meta?.kind === 'task_completion_propagation' && m.task_id === task);
    expect(facts).toHaveLength(1);
    expect(facts[0].meta).toMatchObject({ source_task_id: task, run_count: '1', completed_run_count: '1', source_latest_run_id: first.runIds[0] });
    expect(facts[0].body.startsWith('task completion propagated to project scope\n\nsource_project_id: proj\n')).toBe(true);
    const taskBus = busTypesAndBodies(layout.taskBus(PROJECT, task));
    expect(taskBus.filter((l) => l.startsWith('INFO task completion facts already propagated'))).toHaveLength(2);
    expect(existsSync(join(layout.taskDir(PROJECT, task), 'TASK-COMPLETE-FACT-PROPAGATION.yaml'))).toBe(true);
  });

  it('rejects bad input before writing anything', async () => {
    await expect(runTask({ ...loopParts, root: tmp.root, projectId: '../escape', taskId: taskId(), prompt: 'x' })).rejects.toThrow();
    const task = taskId('noprompt');
    await expect(runTask({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task })).rejects.toThrow('TASK.md not found and no prompt provided');
    expect(existsSync(join(layout.taskDir(PROJECT, task), 'TASK.md'))).toBe(false);
  });
});
