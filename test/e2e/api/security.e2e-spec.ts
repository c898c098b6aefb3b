import * as fs from 'node:fs';
import * as path from 'node:path';
import { createApiApp, listenApiApp, TestApi } from '../../utils/api-app';
import { seedRun } from '../../utils/run-fixtures';
import { fillRoute, rawRequest, registeredRoutes } from './security-helpers';

const P = 'sec';
const T = 'task-20260101-120000-sec';
const R = '20260101-1200000000-300-1';

/** Patterns that answer without a key (the rest of the table needs one). */
const PUBLIC = new Set(['/healthz', '/api/v1/health', '/api/v1/version', '/favicon.ico', '/', '/ui', '/ui/', '/*', '/ui/*', '/metrics', '/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']);
/** Routes with their own credential (an HTTP trigger's token, GitHub's signature; docs/triggers.md): the API key is no key there. */
const OWN_AUTH = new Set(['/api/v1/triggers/:name', '/api/v1/forge/github']);
/** The key checks use ids that name nothing, so a request that gets through (DELETE, gc, resume) changes nothing. */
const NOTHING = { p: 'nothing', t: 'task-20990101-000000-none', r: '20990101-0000000000-1-1', id: 'task-20990101-000000-none' };

/** The protected routes the app registered (#22 item 2), with ids that name nothing. */
function protectedRoutes(api: TestApi): [string, string][] {
  return registeredRoutes(api.app)
    .filter((r) => !PUBLIC.has(r.url) && !OWN_AUTH.has(r.url) && r.method !== 'OPTIONS' && r.method !== 'HEAD')
    .map((r) => [r.method, fillRoute(r.url, NOTHING)]);
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

    it('answers 401 on every non-exempt route without the key and accepts Bearer or X-API-Key', async () => {
      const routes = protectedRoutes(api);
      expect(routes.length).toBeGreaterThan(40);
      for (const [method, url] of routes) {
        const res = await rawRequest(api.base, method, url);
        expect([method, url, res.status]).toEqual([method, url, 401]);
        const metadata = url === '/mcp' ? `, resource_metadata="${api.base}/.well-known/oauth-protected-resource/mcp"` : '';
        expect(res.headers['www-authenticate']).toBe(`Bearer realm="conductor"${metadata}`);
        expect(JSON.parse(res.body)).toEqual({ error: 'unauthorized', message: 'valid API key required' });
        const wrong = await rawRequest(api.base, method, url, { Authorization: 'Bearer sekret-kez' });
        expect(wrong.status).toBe(401);
        const bearer = await rawRequest(api.base, method, url, { Authorization: 'Bearer sekret-key' });
        expect([method, url, bearer.status === 401]).toEqual([method, url, false]);
        const header = await rawRequest(api.base, method, url, { 'X-API-Key': 'sekret-key' });
        expect([method, url, header.status === 401]).toEqual([method, url, false]);
      }
    });

    it('an HTTP trigger answers 401 in its own realm, also to the API key', async () => {
      expect(registeredRoutes(api.app).filter((r) => OWN_AUTH.has(r.url)).map((r) => r.method)).toEqual(['POST', 'POST']);
      for (const headers of [{}, { Authorization: 'Bearer sekret-key' }, { 'X-API-Key': 'sekret-key' }] as Record<string, string>[]) {
        const res = await rawRequest(api.base, 'POST', '/api/v1/triggers/nothing', headers);
        expect([res.status, res.headers['www-authenticate']]).toEqual([401, 'Bearer realm="conductor-trigger"']);
        // no forge.github configured: the GitHub route is closed, the API key opens nothing there
        expect((await rawRequest(api.base, 'POST', '/api/v1/forge/github', headers)).status).toBe(404);
      }
    });

    it('leaves health, version, static UI and preflights open, and takes the key as ?api_key= on SSE', async () => {
      for (const open of ['/healthz', '/api/v1/health', '/api/v1/version', '/', '/ui/', '/ui']) {
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
      const routes = registeredRoutes(api.app).filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS');
      for (const { method, url: route } of routes) {
        for (const slot of ['p', 't', 'r', 'id'] as const) {
          if (!route.split('/').includes(`:${slot}`)) continue;
          for (const attack of attacks) {
            const url = fillRoute(route, { p: P, t: T, r: R, id: T, [slot]: attack });
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
      // The dashboard's own origin: a foreign one is refused earlier (security-browser.e2e-spec.ts).
      const browser: Record<string, string>[] = [{ 'X-Conductor-Client': 'web-ui' }, { Origin: api.base }, { 'Sec-Fetch-Mode': 'cors' }, { Referer: 'http://x/' }];
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
