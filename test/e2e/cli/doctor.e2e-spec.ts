/**
 * Corrupt records in the CLI (issue #29 finding 3): `run-agent status`, `list` and `list --json`
 * show a run or task whose record file cannot be parsed as `corrupt` (with the reason in JSON)
 * and the others as usual; `run-agent doctor` lists every such file. Runs the built bin/run-agent.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONDUCTOR, runCli } from '../../utils/cli';
import { CORRUPT_KINDS, RUN, seedCorruptRoot, T } from '../../utils/corrupt-records';
import { startServer } from '../server/helpers';

describe('corrupt records in the CLI, run-agent doctor (e2e)', () => {
  let dir: string;
  let root: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'doctor-e2e-'));
    root = join(dir, 'runs');
    mkdirSync(join(dir, 'home'));
    env = { PATH: process.env.PATH, HOME: join(dir, 'home') };
    seedCorruptRoot(root);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const cli = (args: string[]) => runCli(args, { env, cwd: dir });

  it('status shows the corrupt tasks as corrupt and the others as usual', async () => {
    const res = await cli(['status', '--root', root, '--project', 'bad', '--json']);
    expect(res.code).toBe(0);
    const rows = new Map<string, { status: string; corrupt_reason?: string }>(JSON.parse(res.stdout).tasks.map((t: { task_id: string }) => [t.task_id, t]));
    for (const kind of CORRUPT_KINDS) expect(rows.get(T(kind))).toMatchObject({ status: 'corrupt', corrupt_reason: expect.stringContaining('run-info') });
    for (const file of ['taskcfg', 'worktree', 'settings']) expect(rows.get(T(file))).toMatchObject({ status: 'corrupt', corrupt_reason: expect.any(String) });
    expect(rows.get(T('mixed'))?.status).toBe('completed');
    const text = await cli(['status', '--root', root, '--project', 'bad']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`${T('garbage')}\\s+corrupt`));
    const good = await cli(['status', '--root', root, '--project', 'good', '--json']);
    expect(JSON.parse(good.stdout).tasks).toEqual([expect.objectContaining({ task_id: T('fine'), status: 'completed' })]);
  });

  it('list, list --json and the run list show corrupt', async () => {
    const tasks = await cli(['list', '--root', root, '--project', 'bad', '--json']);
    expect(tasks.code).toBe(0);
    const byId = new Map<string, { latest_status: string; corrupt_reason?: string }>(JSON.parse(tasks.stdout).tasks.map((t: { task_id: string }) => [t.task_id, t]));
    for (const kind of CORRUPT_KINDS) expect(byId.get(T(kind))).toMatchObject({ latest_status: 'corrupt', corrupt_reason: expect.any(String) });
    expect(byId.get(T('worktree'))?.latest_status).toBe('corrupt');
    const text = await cli(['list', '--root', root, '--project', 'bad']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`${T('scalar')}\\s+\\d+\\s+corrupt`));
    const runs = await cli(['list', '--root', root, '--project', 'bad', '--task', T('mixed'), '--json']);
    expect(runs.code).toBe(0);
    expect(JSON.parse(runs.stdout).runs.map((r: { run_id: string; status: string }) => [r.run_id, r.status])).toEqual(
      expect.arrayContaining([
        [RUN('mixed-bad'), 'corrupt'],
        [RUN('mixed-ok'), 'completed'],
      ]),
    );
    const filtered = await cli(['list', '--root', root, '--project', 'bad', '--status', 'corrupt', '--json']);
    expect(JSON.parse(filtered.stdout).tasks.map((t: { task_id: string }) => t.task_id).sort()).toEqual(
      [...CORRUPT_KINDS, 'taskcfg', 'worktree', 'settings'].map(T).sort(),
    );
  });

  it('doctor lists every file that cannot be parsed (path, kind, reason) and exits 1', async () => {
    const res = await cli(['doctor', '--root', root, '--json']);
    expect(res.code).toBe(1);
    const { problems } = JSON.parse(res.stdout) as { problems: { path: string; kind: string; reason: string }[] };
    const want = [
      ...CORRUPT_KINDS.map((k) => [join(root, 'bad', T(k), 'runs', RUN(k), 'run-info.yaml'), 'run-info']),
      [join(root, 'bad', T('mixed'), 'runs', RUN('mixed-bad'), 'run-info.yaml'), 'run-info'],
      [join(root, 'bad', T('taskcfg'), 'TASK-CONFIG.yaml'), 'task-config'],
      [join(root, 'bad', T('settings'), 'TASK-SETTINGS.yaml'), 'task-settings'],
      [join(root, 'bad', T('worktree'), 'WORKTREE.yaml'), 'worktree'],
    ];
    expect(problems.map((p) => [p.path, p.kind]).sort()).toEqual(want.sort());
    for (const p of problems) expect(p.reason).toMatch(/\S/);
    const text = await cli(['doctor', '--root', root]);
    expect(text.code).toBe(1);
    expect(text.stdout.trim().split('\n')).toHaveLength(want.length);
    expect(text.stdout).toContain(`bad/${T('garbage')}/runs/${RUN('garbage')}/run-info.yaml\trun-info\t`);
    expect(text.stderr).toBe(`${want.length} record file(s) in ${root} cannot be parsed; their runs and tasks are shown as corrupt\n`);
  });

  it('the built server (bin/conductor) answers every listing with the corrupt runs shown, also after a restart', async () => {
    for (let start = 0; start < 2; start++) {
      const server = await startServer(CONDUCTOR, ['--host', '127.0.0.1', '--port', '0', '--root', root], { ...env, CONDUCTOR_API_KEY: 'k' }, dir);
      try {
        const get = async (url: string) => {
          const res = await fetch(`${server.url}${url}`, { headers: { authorization: 'Bearer k' } });
          return { status: res.status, body: (await res.json()) as Record<string, any> };
        };
        expect((await get('/api/projects')).status).toBe(200);
        const tasks = await get('/api/projects/bad/tasks');
        expect(tasks.status).toBe(200);
        expect(tasks.body.items.find((t: { id: string }) => t.id === T('list'))).toMatchObject({ status: 'corrupt' });
        const runs = await get('/api/v1/runs');
        expect(runs.status).toBe(200);
        expect(runs.body.runs.find((r: { run_id: string }) => r.run_id === RUN('fine'))).toMatchObject({ status: 'completed' });
        expect((await get('/api/projects/bad/stats')).status).toBe(200);
      } finally {
        await server.stop();
      }
    }
  });

  it('doctor on a clean root exits 0; a bad flag or a missing --root exits 2', async () => {
    const clean = join(dir, 'clean');
    mkdirSync(join(clean, 'p', T('ok'), 'runs'), { recursive: true });
    expect(await cli(['doctor', '--root', clean])).toMatchObject({ code: 0, stdout: `no unreadable records in ${clean}\n` });
    expect(JSON.parse((await cli(['doctor', '--root', clean, '--json'])).stdout)).toEqual({ root: clean, problems: [] });
    expect((await cli(['doctor', '--root', join(dir, 'absent')])).code).toBe(2);
    expect((await cli(['doctor', '--bogus'])).code).toBe(2);
    expect((await cli(['doctor', 'extra', '--root', clean])).code).toBe(2);
  });
});
