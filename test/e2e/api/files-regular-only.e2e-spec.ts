import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { listenApiApp, TestApi } from '../../utils/api-app';
import { seedRun } from '../../utils/run-fixtures';
import { rawRequest } from './security-helpers';

/*
 * Issue #29 finding 4: the file routes and SSE tails serve only regular files whose real path lies
 * inside the runs root. (A FIFO and /dev/zero links are driven against the real server process in
 * hostile-root.e2e-spec.ts, where a blocked event loop cannot stall this test process.)
 */
const P = 'files';
const T = 'task-20260101-120000-files';
const R = '20260101-1200000000-700-1';
const T2 = 'task-20260101-120000-linked';
const R2 = '20260101-1200000000-700-2';
const SECRET = 'secret outside the runs root\n';

describe('file routes serve only regular files inside the root (issue #29)', () => {
  let api: TestApi & { base: string };
  let runDir: string;
  let outside: string;
  beforeAll(async () => {
    api = await listenApiApp({ disableTaskStart: true });
    outside = fs.mkdtempSync(path.join(api.dir, 'outside-'));
    fs.writeFileSync(path.join(outside, 'secret.txt'), SECRET);
    runDir = seedRun(api.root, P, T, R, {}, 'own line\n');
    // a run file and run-info.yaml that are symlinks out of the root
    fs.rmSync(path.join(runDir, 'agent-stderr.txt'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(runDir, 'agent-stderr.txt'));
    fs.rmSync(path.join(runDir, 'prompt.md'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(runDir, 'prompt.md'));
    // a task folder inside the root that is a symlink to a folder outside it
    const realTask = path.join(outside, T2);
    seedRun(outside, 'x', T2, R2, { project_id: P, task_id: T2 }, SECRET);
    fs.renameSync(path.join(outside, 'x', T2), realTask);
    fs.symlinkSync(realTask, path.join(api.root, P, T2));
  });
  afterAll(async () => api.close());

  it('serves a regular run file as before', async () => {
    const res = await rawRequest(api.base, 'GET', `/api/projects/${P}/tasks/${T}/runs/${R}/file?name=stdout`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).content).toBe('own line\n');
  });

  it('refuses a run file that is a symlink out of the root with 403 (file route and SSE tail)', async () => {
    for (const name of ['stderr', 'prompt']) {
      const res = await rawRequest(api.base, 'GET', `/api/projects/${P}/tasks/${T}/runs/${R}/file?name=${name}`);
      expect([name, res.status]).toEqual([name, 403]);
      expect(res.body).not.toContain('secret');
      expect(JSON.parse(res.body).error.message).toMatch(/^[^\n]*outside the runs root[^\n]*$/);
      const sse = await rawRequest(api.base, 'GET', `/api/projects/${P}/tasks/${T}/runs/${R}/stream?name=${name}`);
      expect([name, sse.status]).toEqual([name, 403]);
    }
  });

  it('does not follow a symlinked task folder that leads out of the root', async () => {
    const list = await rawRequest(api.base, 'GET', `/api/projects/${P}/tasks/${T2}/runs`);
    expect(list.status).toBe(404);
    const file = await rawRequest(api.base, 'GET', `/api/projects/${P}/tasks/${T2}/runs/${R2}/file?name=stdout`);
    expect(file.status).toBe(404);
    expect(file.body).not.toContain('secret');
    fs.writeFileSync(path.join(outside, T2, 'TASK-MESSAGE-BUS.md'), '');
    for (const url of [`/api/projects/${P}/tasks/${T2}/messages`, `/api/v1/messages?project_id=${P}&task_id=${T2}`]) {
      const bus = await rawRequest(api.base, 'GET', url);
      expect([url, bus.status]).toEqual([url, 403]);
    }
    const post = await rawRequest(api.base, 'POST', `/api/projects/${P}/tasks/${T2}/messages`, {}, JSON.stringify({ body: 'x' }));
    expect(post.status).toBe(403);
    expect(fs.readFileSync(path.join(outside, T2, 'TASK-MESSAGE-BUS.md'), 'utf8')).toBe('');
    const all = await rawRequest(api.base, 'GET', '/api/v1/runs');
    expect(all.status).toBe(200);
    expect(JSON.parse(all.body).runs.map((r: { run_id: string }) => r.run_id)).toEqual([R]);
  });

  it('serves at most the size cap of a huge regular file: its last bytes, marked truncated', async () => {
    const big = path.join(runDir, 'agent-stdout.txt');
    const line = `${'x'.repeat(1023)}\n`;
    const fd = fs.openSync(big, 'w');
    for (let i = 0; i < 9 * 1024; i++) fs.writeSync(fd, line);
    fs.writeSync(fd, 'the last line\n');
    fs.closeSync(fd);
    const res = await rawRequest(api.base, 'GET', `/api/projects/${P}/tasks/${T}/runs/${R}/file?name=stdout&tail=1`);
    expect(res.status).toBe(200);
    const body = JSON.parse(res.body);
    expect(body).toEqual(expect.objectContaining({ content: 'the last line\n', truncated: true, size_bytes: fs.statSync(big).size }));
    const whole = JSON.parse((await rawRequest(api.base, 'GET', `/api/projects/${P}/tasks/${T}/runs/${R}/file?name=stdout`)).body);
    expect(whole.content.length).toBeLessThanOrEqual(8 * 1024 * 1024);
    expect(whole.content.startsWith('x')).toBe(true);
    expect(whole.content.endsWith('the last line\n')).toBe(true);
  });

  it('refuses an SSE tail of a FIFO in place of a run file with 403', async () => {
    const run3 = seedRun(api.root, P, T, '20260101-1200000000-700-3', {}, '');
    fs.rmSync(path.join(run3, 'agent-stdout.txt'));
    execFileSync('mkfifo', [path.join(run3, 'agent-stdout.txt')]);
    const sse = await rawRequest(api.base, 'GET', `/api/projects/${P}/tasks/${T}/runs/20260101-1200000000-700-3/stream?name=stdout`);
    expect(sse.status).toBe(403);
    expect(JSON.parse(sse.body).error.message).toBe('run file path: not a regular file');
  });
});
