import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunsLayout } from '@app/storage';
import { createApiApp, TestApi } from '../../utils/api-app';
import { startCli } from '../../utils/cli';
import { cliEnv, PROJECT, runInfos, taskId, tempRoot, waitFor } from './helpers';

// Issue #33 with real processes (built bin/run-agent, fake agent): a root `run-agent job` waiting
// for memory (defaults.min_available_memory) is `queued` with its reason in status and the API,
// and runs once memory is back.
describe('memory admission: a waiting root run is queued, visible everywhere (built CLI)', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  const home = join(tmp.root, '..', 'home');
  mkdirSync(home, { recursive: true });
  const meminfo = join(home, 'meminfo');
  const setAvailable = (kb: number): void => writeFileSync(meminfo, `MemTotal:       16000000 kB\nMemAvailable:   ${kb} kB\n`);
  const configPath = join(home, 'config.yaml');
  writeFileSync(configPath, ['agents:', '  claude:', '    type: claude', 'defaults:', '  min_available_memory: 2GiB', ''].join('\n'));
  let api: TestApi | undefined;
  const started: Promise<unknown>[] = [];
  afterAll(async () => {
    setAvailable(3 * 1024 * 1024); // a failed assertion leaves the job waiting: let it end
    await Promise.all(started);
    await api?.close();
    tmp.cleanup();
  });
  const start = (args: string[]) => {
    const cli = startCli(args, { env: cliEnv(home, { CONDUCTOR_MEMINFO_PATH: meminfo }), cwd: home });
    started.push(cli.done);
    return cli;
  };

  it('shows queued with the reason in status, status --json and the API, then runs', async () => {
    setAvailable(1024 * 1024);
    const task = taskId('rootmem');
    const job = start(['job', '--root', tmp.root, '--config', configPath, '--project', PROJECT, '--task', task, '--agent', 'claude', '--prompt', 'x']);
    await waitFor('the root run marked queued', () => runInfos(layout.taskDir(PROJECT, task)).some((i) => !!i.queued_reason));
    const reason = 'queued: waiting for memory: available 1 GiB < floor 2 GiB (defaults.min_available_memory)';

    const status = await start(['status', '--root', tmp.root, '--project', PROJECT, '--task', task]).done;
    expect(status.code).toBe(0);
    const [header, row] = status.stdout.trim().split('\n');
    expect(header).toMatch(/QUEUED_REASON$/);
    expect(row).toMatch(new RegExp(`^${task}\\s+queued\\s`));
    expect(row.endsWith(reason)).toBe(true);
    const json = await start(['status', '--root', tmp.root, '--project', PROJECT, '--task', task, '--json']).done;
    expect(JSON.parse(json.stdout)).toMatchObject({ tasks: [{ task_id: task, status: 'queued', queued_reason: reason }] });

    api = await createApiApp({ root: tmp.root });
    const flat = await api.app.inject({ method: 'GET', url: `/api/projects/${PROJECT}/runs/flat` });
    expect(flat.statusCode).toBe(200);
    const run = (flat.json() as { runs: { task_id: string; status: string; display_status: string; queued_reason?: string }[] }).runs.find((r) => r.task_id === task);
    expect(run).toMatchObject({ status: 'running', display_status: 'queued', queued_reason: reason });

    setAvailable(3 * 1024 * 1024);
    const done = await job.done;
    expect(done.code).toBe(0);
    const [info] = runInfos(layout.taskDir(PROJECT, task));
    expect(info).toMatchObject({ status: 'completed' });
    expect(info.queued_reason).toBeUndefined();
  }, 60_000);
});
