import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { listenApiApp, TestApi } from '../../utils/api-app';
import { seedRun } from '../../utils/run-fixtures';
import { fillRoute, rawRequest, registeredRoutes, Route, spellings, treeHash } from './security-helpers';

const KEY = 'route-key-1';
const P = 'secp';
const T = 'task-20260101-120000-secr';
const R = '20260101-1200000000-400-1';
const IDS = { p: P, t: T, r: R, id: T };
/** Exactly these route patterns answer without the key (D11 + issue #10). */
const PUBLIC = new Set(['/healthz', '/api/v1/health', '/api/v1/version', '/favicon.ico', '/', '/ui', '/ui/', '/*', '/ui/*', '/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']);

/** A body that would do something real if a request got through (starts an agent, posts, creates). */
function bodyFor(method: string, url: string): string | undefined {
  if (method !== 'POST') return undefined;
  if (url === '/api/v1/tasks') return JSON.stringify({ project_id: P, task_id: 'task-20260101-120000-evil', agent_type: 'fake', prompt: 'pwned' });
  if (url === '/api/projects') return JSON.stringify({ project_id: 'evil', project_root: '/tmp' });
  if (url === '/api/v1/messages') return JSON.stringify({ project_id: P, body: 'pwned' });
  if (url.endsWith('/messages')) return JSON.stringify({ body: 'pwned' });
  return JSON.stringify({});
}

describe('auth is decided on the matched route (issue #10 item 1, #22 item 2)', () => {
  let api: TestApi & { base: string };
  let routes: Route[];
  let uiDir: string;
  beforeAll(async () => {
    // A UI build, so the static catch-all routes (`/*`, `/ui/*`) are registered as in production.
    uiDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sec-ui-'));
    fs.mkdirSync(path.join(uiDir, 'assets'));
    fs.writeFileSync(path.join(uiDir, 'index.html'), '<!doctype html><title>ui</title>\n');
    fs.writeFileSync(path.join(uiDir, 'assets', 'app.js'), 'console.log(1);\n');
    api = await listenApiApp({ apiKey: KEY, uiDir });
    seedRun(api.root, P, T, R, {}, 'a\nb\nc\n');
    fs.writeFileSync(path.join(api.root, P, T, 'TASK.md'), 'x\n');
    routes = registeredRoutes(api.app).filter((r) => r.method !== 'OPTIONS');
  });
  afterAll(async () => {
    await api.close();
    fs.rmSync(uiDir, { recursive: true, force: true });
  });

  it('enumerates the routes the app registered, not a hand-kept list', () => {
    const keys = routes.map((r) => `${r.method} ${r.url}`);
    for (const known of ['POST /api/v1/tasks', 'DELETE /api/projects/:p', 'GET /api/v1/runs/stream/all', 'POST /api/projects/:p/tasks/:t/messages', 'GET /healthz', 'GET /*', 'GET /ui/*']) {
      expect(keys).toContain(known);
    }
    expect(routes.filter((r) => !PUBLIC.has(r.url)).length).toBeGreaterThan(40);
  });

  it('answers 401 or 404 to every spelling of every protected route without the key, and changes nothing', async () => {
    const before = treeHash(api.dir);
    const failures: string[] = [];
    let tried = 0;
    for (const route of routes) {
      if (PUBLIC.has(route.url)) continue;
      for (const spelling of spellings(fillRoute(route.url, IDS))) {
        const res = await rawRequest(api.base, route.method, spelling, {}, bodyFor(route.method, route.url));
        tried++;
        if (res.status !== 401 && res.status !== 404) failures.push(`${route.method} ${spelling} → ${res.status}`);
      }
    }
    expect(failures).toEqual([]);
    expect(tried).toBeGreaterThan(400);
    expect(treeHash(api.dir)).toBe(before);
  });

  it('lets the key through on every protected route, with the Bearer scheme in any case', async () => {
    const schemes = ['Bearer', 'bearer', 'BEARER', 'bEaReR'];
    let i = 0;
    for (const route of routes) {
      if (PUBLIC.has(route.url) || route.method === 'DELETE' || route.method === 'POST') continue;
      const url = fillRoute(route.url, IDS);
      const res = await rawRequest(api.base, route.method, url, { Authorization: `${schemes[i++ % schemes.length]} ${KEY}` });
      expect([route.method, url, res.status === 401]).toEqual([route.method, url, false]);
    }
    expect((await rawRequest(api.base, 'GET', '/api/projects', { Authorization: `Basic ${KEY}` })).status).toBe(401);
    expect((await rawRequest(api.base, 'GET', '/api/projects', { Authorization: `Bearer${KEY}` })).status).toBe(401);
  });

  it('keeps paths no route matched closed, and the public routes open', async () => {
    expect((await rawRequest(api.base, 'POST', '/api/v1/nonexistent', {}, '{}')).status).toBe(401);
    for (const open of ['/healthz', '/api/v1/health', '/api/v1/version', '/', '/ui/', '/assets/app.js', '/ui/assets/app.js']) {
      expect([open, (await rawRequest(api.base, 'GET', open)).status]).toEqual([open, 200]);
    }
    expect((await rawRequest(api.base, 'GET', '/metrics')).status).toBe(401);
    expect((await rawRequest(api.base, 'GET', '/metrics', { Authorization: `bearer ${KEY}` })).status).toBe(200);
  });

  it('opens /metrics only when api.metrics_public is set', async () => {
    const open = await listenApiApp({ apiKey: KEY, extraYaml: 'api:\n  metrics_public: true' });
    try {
      expect((await rawRequest(open.base, 'GET', '/metrics')).status).toBe(200);
      expect((await rawRequest(open.base, 'GET', '/api/projects')).status).toBe(401);
      expect((await rawRequest(open.base, 'GET', '/%6Detrics')).status).toBe(200);
    } finally {
      await open.close();
    }
  });
});
