import { ChildProcess, execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  exited,
  installedVersion,
  killPid,
  makeCandidateTarball,
  makeInstall,
  request,
  startServer,
  waitFor,
  writeWaiterAgent,
} from './self-update-fixtures';
import { announcedPort } from '../../utils/ports';

const PROJECT = 'upd';
const DRAIN = 'self-update drain is in progress; task creation is temporarily unavailable';

/**
 * One real server (bin/conductor of a private copy of the built package) goes through a refused
 * tarball, a deferred update whose new server crashes (rollback), and a deferred update that hands
 * off to the new version on the same port.
 */
describe('self-update of the installed package (e2e)', () => {
  let tmp: string;
  let install: string;
  let root: string;
  let base: string;
  let port: number;
  let server: { child: ChildProcess; output: () => string };
  let newServerPid: number | undefined;
  const releases: string[] = [];
  let seq = 0;

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'self-update-'));
    install = makeInstall(tmp);
    root = path.join(tmp, 'runs');
    const config = path.join(tmp, 'config.yaml');
    // the root-task planner runs one root task at a time, so a second task waits in its queue
    fs.writeFileSync(config, `agents:\n  waiter:\n    type: command\n    command: ${writeWaiterAgent(tmp)}\ndefaults:\n  max_concurrent_root_tasks: 1\n`);
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: tmp, CONDUCTOR_SELF_UPDATE_HANDOFF_TIMEOUT_MS: '10000', CONDUCTOR_NO_AUTH: '1' };
    delete env.CONDUCTOR_PORT;
    server = startServer(install, ['--root', root, '--config', config, '--host', '127.0.0.1', '--port', '0', '--watchdog-interval', '0'], env);
    port = await waitFor('the server to announce its port', () => announcedPort(server.output()));
    base = `http://127.0.0.1:${port}`;
    await waitFor(`server on ${base}\n${server.output()}`, async () => ((await request(base, 'GET', '/api/v1/health')).status === 200 ? true : undefined));
  }, 30_000);

  afterAll(async () => {
    for (const r of releases) fs.writeFileSync(r, '');
    killPid(newServerPid);
    if (server.child.exitCode === null) {
      server.child.kill('SIGKILL');
      await exited(server.child);
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** Creates a root task whose agent runs until its release file appears; returns that file. */
  async function createTask(opts: { released?: boolean; queued?: boolean } = {}): Promise<{ taskId: string; release: string }> {
    const taskId = `task-20260101-120000-upd${++seq}`;
    const release = path.join(tmp, `release-${seq}`);
    if (opts.released) fs.writeFileSync(release, '');
    releases.push(release);
    const res = await request(base, 'POST', '/api/v1/tasks', { project_id: PROJECT, task_id: taskId, agent_type: 'waiter', prompt: 'wait', config: { RELEASE_FILE: release } });
    expect([res.status, res.body?.status]).toEqual([201, opts.queued ? 'queued' : 'started']);
    return { taskId, release };
  }

  /** Runs the installed CLI (bin/run-agent or bin/conductor) from the temp folder. */
  function cli(program: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(process.execPath, [path.join(install, 'bin', program), ...args], { cwd: tmp, env: { ...process.env, HOME: tmp, TZ: 'UTC' } }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  function taskRunStatuses(taskId: string): string[] {
    const runs = path.join(root, PROJECT, taskId, 'runs');
    if (!fs.existsSync(runs)) return [];
    return fs
      .readdirSync(runs)
      .map((r) => path.join(runs, r, 'run-info.yaml'))
      .filter((f) => fs.existsSync(f))
      .map((f) => /^status: (\S+)/m.exec(fs.readFileSync(f, 'utf8'))?.[1] ?? '');
  }

  function runStartTimes(taskId: string): number[] {
    const runs = path.join(root, PROJECT, taskId, 'runs');
    return fs.readdirSync(runs).map((r) => Date.parse(/^start_time: (\S+)/m.exec(fs.readFileSync(path.join(runs, r, 'run-info.yaml'), 'utf8'))![1]));
  }

  const agentRunning = (taskId: string) => waitFor(`a running agent of ${taskId}`, () => (taskRunStatuses(taskId).includes('running') ? true : undefined));
  /** The planner still lists a task until its loop has returned (its root slot is held until then). */
  const plannerHolds = (taskId: string) => {
    const file = path.join(root, '.conductor', 'root-task-planner.yaml');
    return fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes(taskId);
  };
  const taskDone = (taskId: string) =>
    waitFor(`${taskId} to finish and free its root slot`, () =>
      fs.existsSync(path.join(root, PROJECT, taskId, 'DONE')) && taskRunStatuses(taskId).every((s) => s === 'completed') && !plannerHolds(taskId) ? true : undefined,
    );
  const updateState = async () => (await request(base, 'GET', '/api/v1/admin/self-update')).body;
  const settled = (state: string) => waitFor(`self-update state ${state}`, async () => ((await updateState()).state === state ? updateState() : undefined));

  it('starts idle with the three times present', async () => {
    const res = await request(base, 'GET', '/api/v1/admin/self-update');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ state: 'idle', requested_at: '0001-01-01T00:00:00Z', started_at: '0001-01-01T00:00:00Z', finished_at: '0001-01-01T00:00:00Z', active_runs_now: 0 });
  });

  it('rejects bad requests with 400 and changes nothing', async () => {
    const cases: [unknown, string][] = [
      [{}, 'package is required (a .tgz made by npm pack, or a version)'],
      [{ package: path.join(tmp, 'missing.tgz') }, `package: no such file: ${path.join(tmp, 'missing.tgz')}`],
      [{ binary_path: tmp }, 'binary_path must point to a file'],
      [{ package: 'latest-and-greatest' }, 'package must be a .tgz path, a version like 0.2.0 or conductor-loop@<version>: got "latest-and-greatest"'],
      [{ package: '0.2.0', extra: 1 }, 'property extra should not exist'],
    ];
    for (const [body, message] of cases) {
      const res = await request(base, 'POST', '/api/v1/admin/self-update', body);
      expect([res.status, res.body.error?.message]).toEqual([400, message]);
    }
    expect((await updateState()).state).toBe('idle');
  });

  it('a tarball that is not conductor-loop fails at verification; the server keeps serving and accepting tasks', async () => {
    const bad = makeCandidateTarball(tmp, { name: 'not-conductor', version: '9.0.0', server: 'serves' });
    // through the CLI client, with a path relative to the caller's folder
    const start = await cli('conductor', ['update', 'start', '--package', path.basename(bad), '--server', base]);
    expect(start).toEqual({ code: 0, stdout: 'Self-update state: applying\nUpdate handoff has started.\n', stderr: '' });
    const failed = await settled('failed');
    expect(failed).toMatchObject({ package: bad, active_runs_at_request: 0 });
    expect(failed.last_error).toBe('verify candidate package: package name is "not-conductor", expected "conductor-loop"');
    const status = await cli('run-agent', ['server', 'update', 'status', '--server', base]);
    expect(status.stdout).toMatch(/^State: +failed\nActive Root Runs: +0\nCandidate Package: +\S+\.tgz\nRequested At: .*\nStarted At: .*\nFinished At: .*\nLast Error: +verify candidate package: package name is "not-conductor", expected "conductor-loop"\n$/);
    expect(failed.finished_at).not.toBe('0001-01-01T00:00:00Z');
    expect(installedVersion(install)).toBe('0.1.0');
    const { taskId } = await createTask({ released: true });
    await taskDone(taskId);
  }, 30_000);

  it('defers while a root run is active, drains task creation and the planner queue, then rolls back when the new server does not start', async () => {
    const { taskId, release } = await createTask();
    await agentRunning(taskId);
    const { taskId: queuedTask } = await createTask({ released: true, queued: true });
    const crashing = makeCandidateTarball(tmp, { version: '9.1.0', server: 'crashes' });
    const res = await request(base, 'POST', '/api/v1/admin/self-update', { binary_path: crashing });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ state: 'deferred', binary_path: crashing, active_runs_at_request: 1, active_runs_now: 1 });

    const refused = await request(base, 'POST', '/api/v1/tasks', { project_id: PROJECT, task_id: 'task-20260101-120000-refused', agent_type: 'waiter', prompt: 'x' });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ error: { code: 'CONFLICT', message: DRAIN, details: { self_update_state: 'deferred' } } });
    expect(fs.existsSync(path.join(root, PROJECT, 'task-20260101-120000-refused'))).toBe(false);
    expect((await updateState()).state).toBe('deferred');

    fs.writeFileSync(release, '');
    const failed = await settled('failed');
    expect(failed.last_error).toMatch(/^handoff to updated package: the new server exited \(exit code 3\) before answering http:\/\/127\.0\.0\.1:\d+\/api\/v1\/health; rolled back/);
    expect((await request(base, 'GET', '/api/v1/version')).body).toEqual({ version: '0.1.0' });
    expect(installedVersion(install)).toBe('0.1.0');
    expect(fs.readdirSync(tmp).filter((n) => n.startsWith('conductor-loop.failed-'))).toHaveLength(1);
    // the queued task was held back by the drain and starts once it is released
    await taskDone(queuedTask);
    expect(runStartTimes(queuedTask).every((t) => t >= Date.parse(failed.finished_at))).toBe(true);
    expect(runStartTimes(queuedTask)).toHaveLength(1);
    const { taskId: again } = await createTask({ released: true });
    await taskDone(again);
  }, 30_000);

  it('defers while a root run is active and, once it ends, hands off to the new version on the same port', async () => {
    const { taskId, release } = await createTask();
    await agentRunning(taskId);
    const good = makeCandidateTarball(tmp, { version: '9.2.0', server: 'serves' });
    const res = await request(base, 'POST', '/api/v1/admin/self-update', { package: good });
    expect(res.body).toMatchObject({ state: 'deferred', active_runs_now: 1 });
    expect(installedVersion(install)).toBe('0.1.0');

    fs.writeFileSync(release, '');
    const answer = await waitFor('the new version on the same port', async () => {
      const v = await request(base, 'GET', '/api/v1/version');
      return v.body?.version === '9.2.0' ? v.body : undefined;
    });
    newServerPid = answer.pid;
    // conductor's flags-only argv reaches the command tree as `serve …`, which the new bin/conductor accepts alike
    expect(answer.args).toEqual(['serve', '--root', root, '--config', path.join(tmp, 'config.yaml'), '--host', '127.0.0.1', '--port', String(port), '--watchdog-interval', '0']);
    expect(await exited(server.child)).toBe(0);
    expect(installedVersion(install)).toBe('9.2.0');
    const backups = fs.readdirSync(tmp).filter((n) => n.startsWith('conductor-loop.rollback-'));
    expect(backups).toHaveLength(1);
    expect(installedVersion(path.join(tmp, backups[0]))).toBe('0.1.0');
    expect(taskRunStatuses(taskId)).toEqual(['completed']);
  }, 30_000);
});
