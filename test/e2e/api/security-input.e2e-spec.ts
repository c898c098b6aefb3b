import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { listenApiApp, TestApi } from '../../utils/api-app';
import { seedRun } from '../../utils/run-fixtures';
import { cleanEnv, repoRoot, requireBuild, runCli } from '../cli/bus-helpers';
import { rawRequest, treeHash } from './security-helpers';

const P = 'inp';
const T = 'task-20260101-120000-inp';
const R = '20260101-1200000000-600-1';
const INJECT = 'X\n---\nmsg_id: evil';
const LONG_ID = 'a'.repeat(5000);
/** Values that must never reach a bus header: newlines, CR, escape sequences, NUL, line separators, too long. */
const BAD_HEADER_VALUES = [INJECT, 'FACT\r\nmsg_id: x', 'A\u001b[31m', 'A\u0000B', 'A\u2028B', 'T'.repeat(65)];

describe('input limits at the door (issue #10 items 3, 4)', () => {
  let api: TestApi & { base: string };
  let taskBus: string;
  let projectBus: string;
  beforeAll(async () => {
    api = await listenApiApp({ disableTaskStart: true });
    seedRun(api.root, P, T, R, {}, 'l1\nl2\nl3\n');
    taskBus = path.join(api.root, P, T, 'TASK-MESSAGE-BUS.md');
    projectBus = path.join(api.root, P, 'PROJECT-MESSAGE-BUS.md');
    const seed = (url: string) => rawRequest(api.base, 'POST', url, {}, JSON.stringify({ type: 'FACT', body: 'seed' }));
    expect((await seed(`/api/projects/${P}/messages`)).status).toBe(201);
    expect((await seed(`/api/projects/${P}/tasks/${T}/messages`)).status).toBe(201);
  });
  afterAll(async () => api.close());

  it('refuses control characters and overlong values in every header-bound API field with 400; the bus files stay byte-identical', async () => {
    const before = [fs.readFileSync(projectBus), fs.readFileSync(taskBus)];
    const tree = treeHash(api.dir);
    const cases: [string, object][] = [];
    for (const bad of BAD_HEADER_VALUES) {
      cases.push([`/api/projects/${P}/messages`, { type: bad, body: 'x' }]);
      cases.push([`/api/projects/${P}/tasks/${T}/messages`, { type: bad, body: 'x' }]);
      cases.push(['/api/v1/messages', { project_id: P, type: bad, body: 'x' }]);
      cases.push(['/api/v1/messages', { project_id: P, task_id: T, run_id: bad.length > 64 ? 'r'.repeat(129) : bad, body: 'x' }]);
    }
    cases.push(['/api/v1/messages', { project_id: `${P}\n`, body: 'x' }]);
    cases.push(['/api/v1/messages', { project_id: P, task_id: `${T}\r`, body: 'x' }]);
    for (const [url, payload] of cases) {
      const res = await rawRequest(api.base, 'POST', url, {}, JSON.stringify(payload));
      expect([url, payload, res.status]).toEqual([url, payload, 400]);
      const body = JSON.parse(res.body);
      expect(body.error.code).toBe('BAD_REQUEST');
      expect(body.error.message).not.toMatch(/\n/);
    }
    expect([fs.readFileSync(projectBus), fs.readFileSync(taskBus)]).toEqual(before);
    expect(treeHash(api.dir)).toBe(tree);
  });

  it('refuses a 5,000-character id with 400 before it reaches mkdir', async () => {
    const tree = treeHash(api.dir);
    const posts: [string, object][] = [
      ['/api/v1/tasks', { project_id: LONG_ID, task_id: T, agent_type: 'fake', prompt: 'x' }],
      ['/api/v1/messages', { project_id: LONG_ID, body: 'x' }],
      ['/api/projects', { project_id: LONG_ID, project_root: '/tmp' }],
    ];
    for (const [url, payload] of posts) {
      const res = await rawRequest(api.base, 'POST', url, {}, JSON.stringify(payload));
      expect([url.slice(0, 40), res.status, JSON.parse(res.body).error.message]).toEqual([url.slice(0, 40), 400, expect.stringMatching(/over the 128-character limit/)]);
    }
    // In a path too: the router matches ids of any length and the one id rule answers 400 (issue #29)
    for (const id of [LONG_ID, 'a'.repeat(99) + 'b'.repeat(30)]) {
      for (const url of [`/api/projects/${id}`, `/api/projects/${P}/tasks/${id}`, `/api/v1/runs/${id}`, `/api/projects/${id}/messages`]) {
        const method = url.endsWith('/messages') ? 'POST' : 'GET';
        const res = await rawRequest(api.base, method, url, {}, method === 'POST' ? JSON.stringify({ body: 'x' }) : undefined);
        expect([url.slice(0, 40), id.length, res.status]).toEqual([url.slice(0, 40), id.length, 400]);
        expect(JSON.parse(res.body).error.message).toMatch(/^[^\n]*over the 128-character limit$/);
      }
    }
    expect(treeHash(api.dir)).toBe(tree);
  });

  it('routes ids of 101–128 characters: created with 201, then found on their id routes (issue #29)', async () => {
    const id = 'p'.repeat(128);
    const created = await rawRequest(api.base, 'POST', '/api/projects', {}, JSON.stringify({ project_id: id, project_root: api.dir }));
    expect(created.status).toBe(201);
    for (const url of [`/api/projects/${id}`, `/api/projects/${id}/stats`, `/api/projects/${id}/messages`]) {
      const res = await rawRequest(api.base, 'GET', url);
      expect([url.slice(-20), res.status]).toEqual([url.slice(-20), 200]);
    }
    const posted = await rawRequest(api.base, 'POST', `/api/projects/${id}/messages`, {}, JSON.stringify({ body: 'x' }));
    expect(posted.status).toBe(201);
    const runId = 'r'.repeat(128);
    const run = await rawRequest(api.base, 'GET', `/api/v1/runs/${runId}`);
    expect(run.status).toBe(404);
  });

  it('answers deeply nested JSON with 400 and an unsupported media type with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const deep = `{"body":${'['.repeat(100000)}${']'.repeat(100000)}}`;
    const res = await rawRequest(api.base, 'POST', `/api/projects/${P}/messages`, {}, deep);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error).toEqual({ code: 'BAD_REQUEST', message: 'invalid json: nested deeper than 32 levels' });
    const nested = `{"body":"x","type":${'{"a":'.repeat(40)}1${'}'.repeat(40)}}`;
    expect((await rawRequest(api.base, 'POST', '/api/v1/tasks', {}, nested)).status).toBe(400);
    // brackets inside strings do not count
    const inString = await rawRequest(api.base, 'POST', `/api/projects/${P}/messages`, {}, JSON.stringify({ body: '['.repeat(1000) }));
    expect(inString.status).toBe(201);
    const xml = await rawRequest(api.base, 'POST', `/api/projects/${P}/messages`, { 'content-type': 'application/xml' }, '<a/>');
    expect(xml.status).toBe(415);
    expect(JSON.parse(xml.body).error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('validates tail= as a non-negative integer within a bound', async () => {
    const url = (tail: string) => `/api/projects/${P}/tasks/${T}/runs/${R}/file?name=stdout&tail=${tail}`;
    for (const bad of ['-1', 'abc', '1e308', '1.5', '0x10', '1000001', '%20', '2abc']) {
      const res = await rawRequest(api.base, 'GET', url(bad));
      expect([bad, res.status]).toEqual([bad, 400]);
      expect(JSON.parse(res.body).error.message).toBe('tail must be a non-negative integer not above 1000000');
    }
    expect(JSON.parse((await rawRequest(api.base, 'GET', url('2'))).body).content).toBe('l2\nl3\n');
    expect(JSON.parse((await rawRequest(api.base, 'GET', url('0'))).body).content).toBe('l1\nl2\nl3\n');
    expect(JSON.parse((await rawRequest(api.base, 'GET', url(''))).body).content).toBe('l1\nl2\nl3\n');
  });
});

describe('run-agent bus post refuses header injection (exit 2, one line, bus unchanged)', () => {
  let dir: string;
  let root: string;
  let bus: string;
  beforeAll(() => {
    requireBuild();
    dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'sec-cli-'));
    root = path.join(dir, 'runs');
    fs.mkdirSync(path.join(root, P, T), { recursive: true });
    bus = path.join(root, P, T, 'TASK-MESSAGE-BUS.md');
    const ok = runCli(['bus', 'post', '--root', root, '--project', P, '--task', T, '--type', 'FACT', '--body', 'seed'], { env: cleanEnv(dir), cwd: dir });
    expect(ok.code).toBe(0);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const base = () => ['bus', 'post', '--root', root, '--project', P, '--task', T, '--body', 'x'];
  const badArgs = (): string[][] => [
    // argv cannot carry NUL
    ...BAD_HEADER_VALUES.filter((v) => !v.includes('\u0000')).map((v) => ['--type', v]),
    ['--run', 'r\n1'],
    ['--run', 'r'.repeat(200)],
    ['--parent', 'MSG-1\nmsg_id: evil'],
    ['--link', 'file:///x\n---'],
  ];

  /** The Nest path of `bus post` (the fast path is the default; `--help` is the only way there from the shell). */
  function runNest(args: string[]) {
    const nestCli = path.join(repoRoot, 'dist', 'apps', 'cli', 'apps', 'cli', 'src', 'nest-cli.js');
    const probe = `require(${JSON.stringify(nestCli)}).runNestCli(${JSON.stringify(args)}, 'run-agent')`;
    const r = spawnSync(process.execPath, ['-e', probe], { env: cleanEnv(dir), cwd: dir, encoding: 'utf8' });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  it('on the fast path and the Nest path', () => {
    const before = fs.readFileSync(bus);
    const fast = (a: string[]) => runCli(a, { env: cleanEnv(dir), cwd: dir });
    // Nest boots in ~1 s: every case on the fast path, a sample through Nest.
    for (const [i, extra] of badArgs().entries()) {
      for (const [name, run] of [['fast', fast], ...(i % 3 === 0 ? [['nest', runNest] as const] : [])] as const) {
        const r = run([...base(), ...extra]);
        expect([name, extra, r.code]).toEqual([name, extra, 2]);
        expect(r.stderr).toMatch(/^Error: [^\n]+\n$/);
        expect(r.stdout).toBe('');
      }
    }
    const long = runCli(['bus', 'post', '--root', root, '--project', LONG_ID, '--body', 'x'], { env: cleanEnv(dir), cwd: dir });
    expect(long.code).toBe(2);
    expect(long.stderr).toBe('Error: project ID is 5000 characters long, over the 128-character limit\n');
    expect(fs.readFileSync(bus)).toEqual(before);
    expect(fs.existsSync(path.join(root, LONG_ID.slice(0, 100)))).toBe(false);
  });

  it('conductor bus post (the API client) refuses it before sending anything', async () => {
    const conductor = path.join(repoRoot, 'bin', 'conductor');
    const before = fs.readFileSync(bus);
    const api = await listenApiApp({ root });
    try {
      for (const bad of [INJECT, 'T'.repeat(65)]) {
        const r = spawnSync(conductor, ['bus', 'post', '--server', api.base, '--project', P, '--task', T, '--type', bad, '--body', 'x'], { env: cleanEnv(dir), cwd: dir, encoding: 'utf8' });
        expect([bad.slice(0, 10), r.status]).toEqual([bad.slice(0, 10), 2]);
        expect(r.stderr).toMatch(/^Error: [^\n]*message type[^\n]*\n$/);
      }
      // async: the server runs in this process, a synchronous spawn would block it
      const ok = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(conductor, ['bus', 'post', '--server', api.base, '--project', P, '--task', T, '--type', 'FACT', '--body', 'via api'], { env: cleanEnv(dir), cwd: dir });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (code) => resolve({ code, stderr }));
      });
      expect([ok.code, ok.stderr]).toEqual([0, '']);
      expect(fs.readFileSync(bus, 'utf8').slice(before.length)).toContain('via api');
    } finally {
      await api.close();
    }
  });

  it('still posts ordinary types, parents and links', () => {
    const r = runCli([...base(), '--type', 'needs-input:v1', '--parent', 'MSG-20260101-120000-000000001-PID00001-0001', '--link', '/tmp/some file.log'], { env: cleanEnv(dir), cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^msg_id: MSG-/);
    expect(fs.readFileSync(bus, 'utf8')).toContain('type: needs-input:v1\n');
  });
});
