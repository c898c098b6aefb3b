import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { createApiApp, listenApiApp, TestApi } from '../../utils/api-app';
import { seedRun } from '../../utils/run-fixtures';

const P = 'sec';
const T = 'task-20260101-120000-sec';
const R = '20260101-1200000000-300-1';

/** Every route of api.md §1.1 (#3–#46) with ids filled from {p}/{t}/{r}. */
const ROUTES: [string, string][] = [
  ['GET', '/api/v1/status'],
  ['GET', '/api/v1/admin/self-update'],
  ['POST', '/api/v1/admin/self-update'],
  ['GET', '/api/v1/runs/stream/all'],
  ['GET', '/api/v1/tasks'],
  ['POST', '/api/v1/tasks'],
  ['GET', '/api/v1/tasks/{t}'],
  ['DELETE', '/api/v1/tasks/{t}?project_id=nothing'],
  ['GET', '/api/v1/runs'],
  ['GET', '/api/v1/runs/{r}'],
  ['GET', '/api/v1/runs/{r}/info'],
  ['POST', '/api/v1/runs/{r}/stop'],
  ['GET', '/api/v1/runs/{r}/stream'],
  ['GET', '/api/v1/messages?project_id={p}'],
  ['POST', '/api/v1/messages'],
  ['GET', '/api/v1/messages/stream?project_id={p}'],
  ['GET', '/api/projects'],
  ['POST', '/api/projects'],
  ['GET', '/api/projects/home-dirs'],
  ['GET', '/api/projects/{p}'],
  ['DELETE', '/api/projects/nothing'],
  ['GET', '/api/projects/{p}/stats'],
  ['GET', '/api/projects/{p}/runs/flat'],
  ['POST', '/api/projects/nothing/gc'],
  ['GET', '/api/projects/{p}/messages'],
  ['POST', '/api/projects/{p}/messages'],
  ['GET', '/api/projects/{p}/messages/stream'],
  ['GET', '/api/projects/{p}/tasks'],
  ['GET', '/api/projects/{p}/tasks/{t}'],
  ['DELETE', '/api/projects/{p}/tasks/task-20990101-000000-none'],
  ['POST', '/api/projects/{p}/tasks/{t}/resume'],
  ['GET', '/api/projects/{p}/tasks/{t}/file?name=TASK.md'],
  ['GET', '/api/projects/{p}/tasks/{t}/messages'],
  ['POST', '/api/projects/{p}/tasks/{t}/messages'],
  ['GET', '/api/projects/{p}/tasks/{t}/messages/stream'],
  ['GET', '/api/projects/{p}/tasks/{t}/runs'],
  ['GET', '/api/projects/{p}/tasks/{t}/runs/stream'],
  ['GET', '/api/projects/{p}/tasks/{t}/runs/{r}'],
  ['DELETE', '/api/projects/{p}/tasks/{t}/runs/20990101-0000000000-1-1'],
  ['POST', '/api/projects/{p}/tasks/{t}/runs/{r}/stop'],
  ['GET', '/api/projects/{p}/tasks/{t}/runs/{r}/file?name=stdout'],
  ['GET', '/api/projects/{p}/tasks/{t}/runs/{r}/stream?name=stdout'],
];

const fill = (route: string, ids: { p: string; t: string; r: string }) => route.replace('{p}', ids.p).replace('{t}', ids.t).replace('{r}', ids.r);

/** A raw request (no URL normalisation: `..` and `%2e%2e` reach the server as sent); SSE bodies are not awaited. */
function rawRequest(base: string, method: string, rawPath: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname, port, method, path: rawPath, headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers } }, (res) => {
      if ((res.headers['content-type'] ?? '').includes('text/event-stream')) {
        resolve({ status: res.statusCode!, headers: res.headers, body: '' });
        req.destroy();
        return;
      }
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function tree(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: false }).map(String).sort();
}

describe('security', () => {
  describe('with an API key', () => {
    let api: TestApi & { base: string };
    beforeAll(async () => {
      api = await listenApiApp({ apiKey: 'sekret-key' });
      seedRun(api.root, P, T, R, {}, 'out\n');
    });
    afterAll(async () => api.close());
    const ids = { p: P, t: T, r: R };

    it('answers 401 on every non-exempt route without the key and accepts Bearer or X-API-Key', async () => {
      for (const [method, route] of ROUTES) {
        const url = fill(route, ids);
        const res = await rawRequest(api.base, method, url);
        expect([method, url, res.status]).toEqual([method, url, 401]);
        expect(res.headers['www-authenticate']).toBe('Bearer realm="conductor"');
        expect(JSON.parse(res.body)).toEqual({ error: 'unauthorized', message: 'valid API key required' });
        const wrong = await rawRequest(api.base, method, url, { Authorization: 'Bearer sekret-kez' });
        expect(wrong.status).toBe(401);
        const bearer = await rawRequest(api.base, method, url, { Authorization: 'Bearer sekret-key' });
        expect([method, url, bearer.status === 401]).toEqual([method, url, false]);
        const header = await rawRequest(api.base, method, url, { 'X-API-Key': 'sekret-key' });
        expect([method, url, header.status === 401]).toEqual([method, url, false]);
      }
    });

    it('leaves health, version, metrics, static UI and preflights open, and takes the key as ?api_key= on SSE', async () => {
      for (const open of ['/healthz', '/api/v1/health', '/api/v1/version', '/metrics', '/', '/ui/', '/ui']) {
        expect([open, (await rawRequest(api.base, 'GET', open)).status === 401]).toEqual([open, false]);
      }
      expect((await rawRequest(api.base, 'OPTIONS', '/api/projects')).status).toBe(204);
      const sse = await rawRequest(api.base, 'GET', `/api/v1/runs/${R}/stream?api_key=sekret-key`);
      expect(sse.status).toBe(200);
      const cookie = await rawRequest(api.base, 'GET', `/api/projects/${P}/messages/stream`, { Cookie: 'conductor_api_key=sekret-key' });
      expect(cookie.status).toBe(200);
      expect((await rawRequest(api.base, 'GET', `/api/projects?api_key=sekret-key`)).status).toBe(401);
    });
  });

  describe('without a key', () => {
    let api: TestApi & { base: string };
    beforeAll(async () => {
      api = await listenApiApp({ extraYaml: 'api:\n  cors_origins: ["http://ui.example"]' });
      seedRun(api.root, P, T, R, {}, 'out\n');
      fs.writeFileSync(path.join(api.root, P, T, 'TASK.md'), 'x\n');
    });
    afterAll(async () => api.close());

    it('refuses traversal in every id of every route with 400 and touches nothing', async () => {
      const attacks = ['..', '%2e%2e', '..%2f..%2fetc', '%2Fetc%2Fpasswd', 'a%5Cb', '%252e%252e'];
      const before = tree(api.dir);
      for (const [method, route] of ROUTES) {
        for (const slot of ['p', 't', 'r'] as const) {
          if (!route.includes(`{${slot}}`)) continue;
          for (const attack of attacks) {
            const url = fill(route, { p: P, t: T, r: R, [slot]: attack });
            const body = method === 'POST' ? JSON.stringify({ body: 'x' }) : undefined;
            const res = await rawRequest(api.base, method, url, {}, body);
            expect([method, url, res.status]).toEqual([method, url, 400]);
            expect(JSON.parse(res.body).error.code).toBe('BAD_REQUEST');
          }
        }
      }
      const bodies: [string, object][] = [
        ['/api/v1/tasks', { project_id: '../x', task_id: T, agent_type: 'fake', prompt: 'x' }],
        ['/api/v1/tasks', { project_id: P, task_id: '/etc/passwd', agent_type: 'fake', prompt: 'x' }],
        ['/api/v1/tasks', { project_id: P, task_id: 'task-20260101-120000-ok', agent_type: 'fake', prompt: 'x', depends_on: ['../../x'] }],
        ['/api/v1/messages', { project_id: '..', body: 'x' }],
        ['/api/v1/messages', { project_id: P, task_id: 'a/b', body: 'x' }],
        ['/api/projects', { project_id: '%2e%2e', project_root: '/tmp' }],
      ];
      for (const [url, payload] of bodies) {
        const res = await rawRequest(api.base, 'POST', url, {}, JSON.stringify(payload));
        expect([url, payload, res.status]).toEqual([url, payload, 400]);
      }
      const queries = ['/api/v1/messages?project_id=..', `/api/v1/messages?project_id=${P}&task_id=%2e%2e`, `/api/projects/${P}/runs/flat?selected_task_id=..`, `/api/v1/tasks/${T}?project_id=../..`];
      for (const url of queries) expect([url, (await rawRequest(api.base, 'GET', url)).status]).toEqual([url, 400]);
      expect(tree(api.dir)).toEqual(before);
    });

    it('refuses destructive routes from a browser with 403', async () => {
      const browser: Record<string, string>[] = [{ 'X-Conductor-Client': 'web-ui' }, { Origin: 'http://evil.example' }, { 'Sec-Fetch-Mode': 'cors' }, { Referer: 'http://x/' }];
      for (const h of browser) {
        const del = await rawRequest(api.base, 'DELETE', `/api/projects/${P}`, h);
        expect(del.status).toBe(403);
        expect(JSON.parse(del.body)).toEqual({ error: { code: 'FORBIDDEN', message: 'project deletion is disabled in the web UI' } });
      }
      expect(JSON.parse((await rawRequest(api.base, 'DELETE', `/api/projects/${P}/tasks/${T}`, browser[0])).body).error.message).toBe('task deletion is disabled in the web UI');
      expect(JSON.parse((await rawRequest(api.base, 'DELETE', `/api/projects/${P}/tasks/${T}/runs/${R}`, browser[0])).body).error.message).toBe('run deletion is disabled in the web UI');
      expect(JSON.parse((await rawRequest(api.base, 'POST', `/api/projects/${P}/gc`, browser[0])).body).error.message).toBe('project garbage collection is disabled in the web UI');
      expect(fs.existsSync(path.join(api.root, P, T, 'runs', R))).toBe(true);
    });

    it('answers CORS preflights with 204 and allowed-origin headers, echoes request ids', async () => {
      const pre = await rawRequest(api.base, 'OPTIONS', '/anything', { Origin: 'http://ui.example' });
      expect(pre.status).toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBe('http://ui.example');
      expect(pre.headers['access-control-allow-methods']).toBe('GET,POST,DELETE,OPTIONS');
      expect(pre.headers['access-control-expose-headers']).toBe('X-Request-ID');
      const other = await rawRequest(api.base, 'OPTIONS', '/api/projects', { Origin: 'http://other.example' });
      expect(other.status).toBe(204);
      expect(other.headers['access-control-allow-origin']).toBeUndefined();
      const echoed = await rawRequest(api.base, 'GET', '/api/projects', { 'X-Request-ID': '  my-id-1 ' });
      expect(echoed.headers['x-request-id']).toBe('my-id-1');
      const sse = await rawRequest(api.base, 'GET', `/api/v1/runs/${R}/stream`, { 'X-Request-ID': 'sse-id' });
      expect(sse.headers['x-request-id']).toBe('sse-id');
    });

    it('limits JSON bodies to 1 MiB and writes redacted audit records', async () => {
      const big = await rawRequest(api.base, 'POST', `/api/projects/${P}/messages`, {}, JSON.stringify({ body: 'x'.repeat(1100000) }));
      expect(big.status).toBe(413);
      expect(JSON.parse(big.body).error.code).toBe('PAYLOAD_TOO_LARGE');
      const bad = await rawRequest(api.base, 'POST', `/api/projects/${P}/messages`, {}, '{"body": ');
      expect(JSON.parse(bad.body).error.message).toMatch(/^invalid json/);
      await rawRequest(api.base, 'POST', '/api/v1/messages', { 'X-Request-ID': 'audit-1' }, JSON.stringify({ project_id: P, body: 'use token=abc123 and Bearer xyz and sk_live12345678' }));
      const lines = fs.readFileSync(path.join(api.root, '_audit', 'form-submissions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      const rec = lines.find((l) => l.request_id === 'audit-1');
      expect(rec).toMatchObject({ correlation_id: 'audit-1', method: 'POST', path: '/api/v1/messages', endpoint: 'POST /api/v1/messages', project_id: P });
      expect(rec.payload.body).toBe('use token=[REDACTED] and Bearer [REDACTED] and [REDACTED]');
    });
  });

  it('takes the key from the config (api.auth_enabled + api.api_key)', async () => {
    const api = await createApiApp({ extraYaml: 'api:\n  auth_enabled: true\n  api_key: from-config' });
    try {
      expect((await api.app.inject({ method: 'GET', url: '/api/projects' })).statusCode).toBe(401);
      expect((await api.app.inject({ method: 'GET', url: '/api/projects', headers: { 'x-api-key': 'from-config' } })).statusCode).toBe(200);
    } finally {
      await api.close();
    }
  });
});
