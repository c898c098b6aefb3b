import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { CONDUCTOR, RUN_AGENT, runCli, startCli, type StartedCli } from '../../utils/cli';
import { BUS_PROJECT as P, BUS_TASKS, buildHostileRoot } from '../../utils/hostile-root';
import { announcedPort } from '../../utils/ports';
import { waitFor } from '../../utils/wait';

/*
 * Issue #29: a FIFO (or a /dev/zero link, or a folder) in place of TASK-MESSAGE-BUS.md or
 * PROJECT-MESSAGE-BUS.md is that bus's problem: its message routes and streams answer 403 with one
 * line (they answered 500), listings answer 2xx and show the task as corrupt, nothing blocks, and
 * the CLI fails with one line instead of hanging. Against the real server process: a blocked
 * event loop there cannot stall this test.
 */
const BAD = [BUS_TASKS.fifo, BUS_TASKS.devZero, BUS_TASKS.folder];

describe('a message bus that is not a regular file (issue #29)', () => {
  let dir: string;
  let root: string;
  let server: StartedCli;
  let base: string;
  let authorization: string;
  const get = (url: string, init: RequestInit = {}) => fetch(`${base}${url}`, { ...init, headers: { authorization, 'content-type': 'application/json', ...init.headers } });
  const cli = (args: string[]) => runCli([...args, '--root', root], { bin: RUN_AGENT, cwd: dir, env: { ...process.env, HOME: dir }, timeoutMs: 30_000 });

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(tmpdir(), 'bus-not-regular-'));
    root = path.join(dir, 'runs');
    fs.mkdirSync(root);
    buildHostileRoot(root, { kinds: ['busNotFiles'] });
    server = startCli(['--port', '0', '--root', root, '--disable-task-start'], { bin: CONDUCTOR, env: { ...process.env, HOME: dir }, cwd: dir, timeoutMs: 300_000 });
    const port = await waitFor('the server to announce its port', () => announcedPort(server.stdout()), 60_000);
    base = `http://127.0.0.1:${port}`;
    authorization = `Bearer ${fs.readFileSync(path.join(dir, '.run-agent', 'api-key'), 'utf8').trim()}`;
  }, 120_000);
  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await server?.done;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers the messages routes, streams and posts of such a bus 403 with one line, writing nothing', async () => {
    const urls = [
      [`/api/projects/${P}/messages`, 'not a regular file'],
      [`/api/v1/messages?project_id=${P}`, 'not a regular file'],
      [`/api/projects/${P}/messages/stream`, 'not a regular file'],
      ...BAD.flatMap((t) => {
        const why = t === BUS_TASKS.devZero ? 'a symlink' : 'not a regular file';
        return [
          [`/api/projects/${P}/tasks/${t}/messages`, why],
          [`/api/v1/messages?project_id=${P}&task_id=${t}`, why],
          [`/api/projects/${P}/tasks/${t}/messages/stream`, why],
          [`/api/v1/messages/stream?project_id=${P}&task_id=${t}`, why],
        ];
      }),
    ];
    for (const [url, why] of urls) {
      const res = await get(url);
      expect([url, res.status]).toEqual([url, 403]);
      expect(await res.json()).toEqual({ error: { code: 'FORBIDDEN', message: `message bus path: ${why}` } });
    }
    for (const url of [`/api/projects/${P}/messages`, ...BAD.map((t) => `/api/projects/${P}/tasks/${t}/messages`)]) {
      const res = await get(url, { method: 'POST', body: JSON.stringify({ body: 'hello' }) });
      expect([url, res.status]).toEqual([url, 403]);
    }
    expect(fs.lstatSync(path.join(root, P, 'PROJECT-MESSAGE-BUS.md')).isFIFO()).toBe(true);
    expect(fs.lstatSync(path.join(root, P, BUS_TASKS.fifo, 'TASK-MESSAGE-BUS.md')).isFIFO()).toBe(true);
    const good = await get(`/api/projects/${P}/tasks/${BUS_TASKS.good}/messages`);
    expect(good.status).toBe(200);
    expect((await get('/api/v1/health')).status).toBe(200);
  });

  it('lists the project 2xx, the tasks with such a bus as corrupt and the good one as it is', async () => {
    for (const url of ['/api/projects', `/api/projects/${P}`, `/api/projects/${P}/stats`, `/api/projects/${P}/runs/flat`, '/api/v1/runs', '/api/v1/tasks', '/api/v1/status', '/api/v1/questions']) {
      const res = await get(url);
      expect([url, res.status]).toEqual([url, 200]);
    }
    const list = (await (await get(`/api/projects/${P}/tasks`)).json()) as { items: { id: string; status: string; corrupt_reason?: string }[] };
    const byId = new Map(list.items.map((t) => [t.id, t]));
    for (const t of BAD) {
      expect([t, byId.get(t)?.status]).toEqual([t, 'corrupt']);
      expect(byId.get(t)?.corrupt_reason).toMatch(/^message bus path ".*TASK-MESSAGE-BUS\.md" is (not a regular file|a symlink)$/);
      const detail = await get(`/api/projects/${P}/tasks/${t}`);
      expect([t, detail.status]).toEqual([t, 200]);
    }
    expect(byId.get(BUS_TASKS.good)).toMatchObject({ status: 'completed' });
    expect(byId.get(BUS_TASKS.good)?.corrupt_reason).toBeUndefined();
  });

  it('run-agent bus read/post fail with one line and never hang; status shows corrupt; doctor lists the buses', async () => {
    for (const args of [
      ['bus', 'read', '--project', P],
      ['bus', 'read', '--project', P, '--follow'],
      ['bus', 'read', '--project', P, '--task', BUS_TASKS.fifo],
      ['bus', 'read', '--project', P, '--task', BUS_TASKS.fifo, '--follow'],
      ['bus', 'read', '--project', P, '--task', BUS_TASKS.devZero, '--tail', '5'],
      ['bus', 'post', '--project', P, '--task', BUS_TASKS.fifo, '--type', 'INFO', '--body', 'x'],
    ]) {
      const r = await cli(args);
      expect({ args, code: r.code, signal: r.signal, stdout: r.stdout }).toEqual({ args, code: 1, signal: null, stdout: '' });
      expect(r.stderr).toMatch(/^Error: message bus path ".*MESSAGE-BUS\.md" is (not a regular file|a symlink)\n$/);
    }
    const status = await cli(['status', '--project', P, '--json']);
    expect(status.code).toBe(0);
    const rows = (JSON.parse(status.stdout) as { tasks: { task_id: string; status: string }[] }).tasks;
    expect(rows.filter((r) => r.status === 'corrupt').map((r) => r.task_id).sort()).toEqual([...BAD].sort());
    const doctor = await cli(['doctor', '--json']);
    expect(doctor.code).toBe(1);
    const problems = (JSON.parse(doctor.stdout) as { problems: { path: string; kind: string }[] }).problems;
    expect(problems.filter((p) => p.kind === 'message-bus').map((p) => path.relative(root, p.path)).sort()).toEqual(
      [path.join(P, 'PROJECT-MESSAGE-BUS.md'), ...BAD.map((t) => path.join(P, t, 'TASK-MESSAGE-BUS.md'))].sort(),
    );
  });
});
