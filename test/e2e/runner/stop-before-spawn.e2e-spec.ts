import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { acquireRunSlot, runJob, stopRun } from '@app/runner';
import { loadConfig, readRunInfo, RunsLayout } from '@app/storage';
import { listenApiApp } from '../../utils/api-app';
import { startCli } from '../../utils/cli';
import { agentEnv, cliEnv, PROJECT, processAlive, RUN_AGENT, runInfos, taskId, tempRoot, waitFor } from './helpers';
import { loopParts } from '../../utils/loop-parts';

/*
 * Until a runner has spawned its agent, the run's record names the runner (`starting: true`). A
 * stop in that window must not signal the runner's process group (a shell job's, a server's):
 * it leaves STOPPED-BY, the runner does not start the agent and records the stop.
 */
describe('stop before the agent is spawned', () => {
  const tmp = tempRoot();
  const base = dirname(tmp.root);
  const home = join(base, 'home');
  const layout = new RunsLayout(tmp.root);
  const started: ChildProcess[] = [];
  const bystanders: number[] = [];
  beforeAll(() => mkdirSync(home, { recursive: true }));
  afterEach(() => {
    for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const pid of bystanders.splice(0)) if (processAlive(pid)) process.kill(pid, 'SIGKILL');
  });
  afterAll(() => tmp.cleanup());

  /**
   * `run-agent job` as a child run, held in its agent's `--version` (after its record is written,
   * before the spawn), as the leader of its own process group that also holds a bystander `sleep`.
   */
  async function heldRunner(slug: string) {
    const task = taskId(slug);
    const gate = join(base, `${task}.gate`);
    const dumps = join(base, `${task}.dumps`);
    const bystanderFile = join(base, `${task}.bystander`);
    mkdirSync(dumps, { recursive: true });
    const env = cliEnv(home, { FAKE_AGENT_VERSION_WAIT_FILE: gate, FAKE_AGENT_ENV_DUMP: dumps });
    const args = ['job', '--root', tmp.root, '--project', PROJECT, '--task', task, '--agent', 'claude', '--parent-run-id', 'parent-run-1', '--prompt', 'x'];
    const runner = spawn('sh', ['-c', `sleep 300 & echo $! > '${bystanderFile}'; exec "$0" "$@"`, process.execPath, RUN_AGENT, ...args], {
      detached: true,
      env,
      stdio: 'ignore',
    });
    started.push(runner);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => runner.on('exit', (code, signal) => resolve({ code, signal })));
    const bystander = await waitFor(() => (existsSync(bystanderFile) ? Number(readFileSync(bystanderFile, 'utf8').trim()) || undefined : undefined));
    bystanders.push(bystander);
    const info = await waitFor(() => runInfos(layout.taskDir(PROJECT, task)).find((i) => i.starting), 30_000);
    const runDir = join(layout.runsDir(PROJECT, task), info.run_id);
    expect(info.pid).toBe(runner.pid);
    expect(info.pgid).toBe(runner.pid);
    return { task, gate, dumps, runner, exited, bystander, info, runDir };
  }

  async function expectStoppedWithoutAgent(held: Awaited<ReturnType<typeof heldRunner>>, stoppedBy: RegExp) {
    const exit = await held.exited;
    expect(exit.signal).toBeNull();
    expect(processAlive(held.bystander)).toBe(true);
    expect(readdirSync(held.dumps)).toEqual([]);
    const info = readRunInfo(join(held.runDir, 'run-info.yaml'));
    expect(info).toMatchObject({ status: 'failed', exit_code: -1 });
    expect(info.error_summary).toMatch(stoppedBy);
    expect(info.starting).toBeUndefined();
    expect(readFileSync(join(held.runDir, 'run-info.yaml'), 'utf8')).not.toContain('starting');
  }

  it('run-agent stop from another process: the runner\'s group survives, the agent never runs', async () => {
    const held = await heldRunner('cli');
    expect(readFileSync(join(held.runDir, 'run-info.yaml'), 'utf8')).toContain('starting: true\n');
    const stop = startCli(['stop', '--run-dir', held.runDir, '--grace', '2s'], { env: cliEnv(home) });
    started.push(stop.child);
    await waitFor(() => existsSync(join(held.runDir, 'STOPPED-BY')), 30_000);
    // the runner is still held: nothing signalled it or its group
    expect(processAlive(held.info.pid)).toBe(true);
    expect(processAlive(held.bystander)).toBe(true);
    writeFileSync(held.gate, '');
    const result = await stop.done;
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`Stopped run ${held.info.run_id} before its agent started\n`);
    await expectStoppedWithoutAgent(held, /^stopped by run-agent stop \(pid \d+\) before the agent started$/);
  }, 60_000);

  it('the server\'s stop (POST /api/v1/runs/{id}/stop) does not signal the runner\'s group either', async () => {
    const api = await listenApiApp({ root: tmp.root });
    try {
      const held = await heldRunner('api');
      const res = await fetch(`${api.base}/api/v1/runs/${held.info.run_id}/stop`, { method: 'POST' });
      expect(res.status).toBe(202);
      await waitFor(() => existsSync(join(held.runDir, 'STOPPED-BY')), 30_000);
      expect(processAlive(held.bystander)).toBe(true);
      writeFileSync(held.gate, '');
      await expectStoppedWithoutAgent(held, /^stopped by api before the agent started$/);
      const after = await fetch(`${api.base}/api/v1/runs/${held.info.run_id}`);
      expect(await after.json()).toMatchObject({ status: 'failed', display_status: 'stopped' });
    } finally {
      await api.close();
    }
  }, 60_000);

  it('a child run queued for a run slot ends its wait on the stop, in-process (the server\'s case)', async () => {
    const task = taskId('slot');
    const dumps = join(base, `${task}.dumps`);
    mkdirSync(dumps, { recursive: true });
    const configPath = join(base, `${task}.yaml`);
    writeFileSync(configPath, ['agents:', '  claude:', '    type: claude', 'defaults:', '  max_concurrent_runs: 1', ''].join('\n'));
    const holder = await acquireRunSlot({ root: tmp.root, limit: 1, runId: 'slot-holder' });
    try {
      const job = runJob({
        ...loopParts,
        root: tmp.root,
        projectId: PROJECT,
        taskId: task,
        prompt: 'x',
        agent: 'claude',
        parentRunId: 'parent-run-2',
        config: loadConfig(configPath, { strict: false }),
        slotPollMs: 20,
        env: agentEnv({ FAKE_AGENT_ENV_DUMP: dumps }),
      });
      const info = await waitFor(() => runInfos(layout.taskDir(PROJECT, task)).find((i) => i.starting));
      // this process is the runner: a signal to its pid or group would end the test run itself
      expect(info.pid).toBe(process.pid);
      const stopped = await stopRun(join(layout.runsDir(PROJECT, task), info.run_id), { graceMs: 1000, stoppedBy: 'the test' });
      expect(stopped).toMatchObject({ stopped: true, beforeStart: true, runId: info.run_id });
      await expect(job).resolves.toMatchObject({ ok: false, error: 'stopped by the test before the agent started' });
      expect(readdirSync(dumps)).toEqual([]);
      expect(runInfos(layout.taskDir(PROJECT, task))[0]).toMatchObject({ status: 'failed', error_summary: 'stopped by the test before the agent started' });
    } finally {
      holder.release();
    }
  }, 30_000);

  it('a stop request already in the run folder: the runner does not spawn the agent', async () => {
    const task = taskId('early');
    const dumps = join(base, `${task}.dumps`);
    mkdirSync(dumps, { recursive: true });
    const runDir = layout.allocateRunDir(PROJECT, task);
    writeFileSync(join(runDir.dir, 'STOPPED-BY'), 'an early stop\n');
    const result = await runJob({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'x',
      agent: 'claude',
      runDir,
      env: agentEnv({ FAKE_AGENT_ENV_DUMP: dumps }),
    });
    expect(result).toMatchObject({ ok: false, error: 'stopped by an early stop before the agent started' });
    expect(readdirSync(dumps)).toEqual([]);
    expect(runInfos(layout.taskDir(PROJECT, task))[0]).toMatchObject({ status: 'failed', exit_code: -1, error_summary: 'stopped by an early stop before the agent started' });
  }, 15_000);
});
