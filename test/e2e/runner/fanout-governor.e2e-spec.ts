import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runJob, validateTaskSettings, writeTaskSettings } from '@app/runner';
import { RunInfo, RunsLayout, runState, writeRunInfo, ZERO_TIME } from '@app/storage';
import { waitFor } from '../../utils/wait';
import { agentEnv, busTypesAndBodies, PROJECT, runInfos, taskId, tempRoot } from './helpers';
import { loopParts } from '../../utils/loop-parts';

describe('fan-out governor: children per run and runs per task tree (issue #33)', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  afterAll(() => tmp.cleanup());

  /** Writes a run of `task` (a child of `parent` when given); `live` leaves it unfinished. */
  function run(task: string, parent: string | undefined, live: boolean): string {
    const { runId, dir } = layout.allocateRunDir(PROJECT, task);
    writeRunInfo(join(dir, 'run-info.yaml'), {
      version: 1, run_id: runId, parent_run_id: parent, project_id: PROJECT, task_id: task, agent: 'claude',
      pid: 0, pgid: 0, start_time: new Date(), end_time: live ? ZERO_TIME : new Date(), exit_code: live ? -1 : 0,
      status: live ? 'running' : 'completed', agent_version: '',
    });
    return runId;
  }
  const child = (parentRunId: string, config?: unknown) =>
    runJob({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: taskId('kid'), prompt: 'x', agent: 'claude', parentRunId, config: config as never, env: agentEnv() });
  const cfg = (extra: Record<string, number>) => ({ agents: {}, defaults: { agent: '', timeout: 0, max_concurrent_runs: 0, max_concurrent_root_tasks: 0, ...extra } });

  const kid = (parentRunId: string, kidTask: string, release: string, extra: { noWait?: boolean; config?: unknown } = {}) =>
    runJob({
      ...loopParts,
      root: tmp.root, projectId: PROJECT, taskId: kidTask, prompt: 'x', agent: 'claude', parentRunId, noWait: extra.noWait,
      config: extra.config as never, env: agentEnv({ FAKE_AGENT_WAIT_FILE: release }), slotPollMs: 20,
    });
  const infoOf = (kidTask: string, runId: string) => runInfos(layout.taskDir(PROJECT, kidTask)).find((i) => i.run_id === runId);
  const runIdOf = (kidTask: string, pred: (i: RunInfo) => boolean) => runInfos(layout.taskDir(PROJECT, kidTask)).find(pred)?.run_id;

  it('a child beyond max_children_per_run is queued (FIFO, reason in its run-info) and starts when a place frees; --no-wait refuses', async () => {
    const rootTask = taskId('kids');
    const parent = run(rootTask, undefined, true);
    writeTaskSettings(layout.taskDir(PROJECT, rootTask), validateTaskSettings({ max_children_per_run: 1 }));
    const [k1, k2, k3] = [taskId('k1'), taskId('k2'), taskId('k3')];
    const rel = (t: string) => join(tmp.root, '..', `release-${t}`);
    const first = kid(parent, k1, rel(k1));
    await waitFor('the first child started its agent', () => runInfos(layout.taskDir(PROJECT, k1)).some((i) => i.pid > 0 && !i.starting));
    const second = kid(parent, k2, rel(k2));
    await waitFor('the second child is queued', () => runInfos(layout.taskDir(PROJECT, k2)).some((i) => !!i.queued_reason));
    const third = kid(parent, k3, rel(k3));
    await waitFor('the third child is queued', () => runInfos(layout.taskDir(PROJECT, k3)).some((i) => !!i.queued_reason));
    const second2 = runIdOf(k2, () => true)!;
    const reason = `queued: children per run limit (1) reached: run ${parent} has 1 running children (limit set by max_children_per_run of task ${rootTask})`;
    expect(infoOf(k2, second2)).toMatchObject({ status: 'running', queued_reason: reason });
    expect(runState(infoOf(k2, second2)!)).toBe('queued');
    expect(busTypesAndBodies(layout.taskBus(PROJECT, k2))).toContain(`INFO ${reason}`);

    // --no-wait refuses at once and writes no run
    const refused = await kid(parent, taskId('k4'), rel('k4'), { noWait: true });
    expect(refused).toMatchObject({ ok: false, code: 'FANOUT_LIMIT' });
    expect(refused.error).toBe(`children per run limit (1) reached: run ${parent} has 1 running children (limit set by max_children_per_run of task ${rootTask}); not queued (--no-wait)`);

    // FIFO: when the first ends, the second (queued first) starts, the third still waits
    writeFileSync(rel(k1), '');
    expect((await first).ok).toBe(true);
    await waitFor('the second child started its agent', () => (infoOf(k2, second2)?.pid ?? 0) > 0 && !infoOf(k2, second2)?.starting);
    expect(infoOf(k2, second2)?.queued_reason).toBeUndefined();
    expect(runInfos(layout.taskDir(PROJECT, k3))[0].queued_reason).toBe(reason);
    writeFileSync(rel(k2), '');
    writeFileSync(rel(k3), '');
    expect((await second).ok).toBe(true);
    expect((await third).ok).toBe(true);
    expect(busTypesAndBodies(layout.taskBus(PROJECT, k3))).toContain("INFO admitted: a place among the parent run's children is free; starting");
  });

  it('a child waiting for a max_concurrent_runs slot shows queued with the reason until it starts', async () => {
    const parent = run(taskId('slotparent'), undefined, true);
    const [s1, s2] = [taskId('s1'), taskId('s2')];
    const rel = (t: string) => join(tmp.root, '..', `release-${t}`);
    const config = cfg({ max_concurrent_runs: 1 });
    const first = kid(parent, s1, rel(s1), { config });
    await waitFor('the first child started its agent', () => runInfos(layout.taskDir(PROJECT, s1)).some((i) => i.pid > 0 && !i.starting));
    const second = kid(parent, s2, rel(s2), { config });
    await waitFor('the second child is queued', () => runInfos(layout.taskDir(PROJECT, s2)).some((i) => !!i.queued_reason));
    expect(runInfos(layout.taskDir(PROJECT, s2))[0].queued_reason).toBe('queued: waiting for a run slot (defaults.max_concurrent_runs = 1)');
    writeFileSync(rel(s1), '');
    expect((await first).ok).toBe(true);
    await waitFor('the second child started its agent', () => runInfos(layout.taskDir(PROJECT, s2)).some((i) => i.pid > 0 && !i.starting));
    expect(runInfos(layout.taskDir(PROJECT, s2))[0].queued_reason).toBeUndefined();
    writeFileSync(rel(s2), '');
    expect((await second).ok).toBe(true);
  });

  it('config defaults.max_runs_per_tree counts the root run and all its descendants, finished or not', async () => {
    const top = run(taskId('tree'), undefined, false);
    const mid = run(taskId('mid'), top, false);
    const refused = await child(mid, cfg({ max_runs_per_tree: 2 }));
    expect(refused.ok).toBe(false);
    expect(refused.error).toBe(`runs per task tree limit (2) reached: the tree of run ${top} has 2 runs (limit set by config defaults.max_runs_per_tree)`);
    expect((await child(mid, cfg({ max_runs_per_tree: 3 }))).ok).toBe(true);
    // now the tree holds 3 runs
    expect((await child(mid, cfg({ max_runs_per_tree: 3 }))).error).toContain('the tree of run');
  });

  it('with --no-wait, children started at the same instant are counted under a lock: exactly max_children_per_run pass', async () => {
    const rootTask = taskId('race');
    const parent = run(rootTask, undefined, true);
    const kidTask = taskId('racekid');
    const release = join(tmp.root, '..', `release-${kidTask}`);
    let settled = 0;
    const jobs = [1, 2, 3, 4].map(() =>
      runJob({
        ...loopParts,
        root: tmp.root, projectId: PROJECT, taskId: kidTask, prompt: 'x', agent: 'claude', parentRunId: parent, noWait: true,
        config: cfg({ max_children_per_run: 1 }) as never, env: agentEnv({ FAKE_AGENT_WAIT_FILE: release }),
      }).finally(() => settled++),
    );
    // every job has either ended (refused) or started its agent, which waits for the release file
    await waitFor('every job refused or started', () => settled + runInfos(layout.taskDir(PROJECT, kidTask)).filter((i) => i.pid > 0).length === 4);
    writeFileSync(release, '');
    const results = await Promise.all(jobs);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => r.code === 'FANOUT_LIMIT')).toHaveLength(3);
    expect(readdirSync(join(layout.taskDir(PROJECT, kidTask), 'runs'))).toHaveLength(1);
    // the lock sits in the task folder of the tree's top run
    expect(existsSync(join(layout.taskDir(PROJECT, rootTask), 'FANOUT.lock'))).toBe(true);
  });

  it('bad limits are refused by the one validator', () => {
    expect(() => validateTaskSettings({ max_children_per_run: 0 })).toThrow('max children per run must be a whole number from 1 to 100000, got 0');
    expect(() => validateTaskSettings({ max_runs_per_tree: 'x' })).toThrow('max runs per tree must be a whole number from 1 to 100000, got "x"');
    expect(validateTaskSettings({ max_runs_per_tree: '5' })).toEqual({ max_runs_per_tree: 5 });
  });
});
