import * as fs from 'node:fs';
import * as path from 'node:path';
import { listenApiApp, TestApi } from '../../utils/api-app';
import { seedRun } from '../../utils/run-fixtures';
import { fillRoute, rawRequest, registeredRoutes, Route, treeHash } from './security-helpers';

const P = 'xsite';
const T = 'task-20260101-120000-xsite';
const R = '20260101-1200000000-500-1';
const IDS = { p: P, t: T, r: R, id: T };
const EVIL = 'https://evil.example';
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
const TASK_FORM = `project_id=${P}&task_id=task-20260101-120000-evil&agent_type=fake&prompt=pwned`;
const TASK_JSON = JSON.stringify({ project_id: P, task_id: 'task-20260101-120000-evil', agent_type: 'fake', prompt: 'pwned' });

/** What a foreign web page can send without a preflight, and JSON with foreign browser headers. */
const ATTACKS: { name: string; headers: Record<string, string>; body: string; status: number }[] = [
  { name: 'form, cross-site', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: EVIL, 'sec-fetch-site': 'cross-site' }, body: TASK_FORM, status: 415 },
  { name: 'form, no origin', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: TASK_FORM, status: 415 },
  { name: 'text/plain', headers: { 'content-type': 'text/plain', origin: EVIL }, body: TASK_JSON, status: 415 },
  { name: 'text/plain, no origin', headers: { 'content-type': 'text/plain;charset=UTF-8' }, body: TASK_JSON, status: 415 },
  { name: 'multipart', headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: '--x--\r\n', status: 415 },
  { name: 'body without type', headers: { 'content-type': '' }, body: TASK_JSON, status: 415 },
  { name: 'json, foreign origin', headers: { 'content-type': 'application/json', origin: EVIL }, body: TASK_JSON, status: 403 },
  { name: 'json, origin null', headers: { 'content-type': 'application/json', origin: 'null' }, body: TASK_JSON, status: 403 },
  { name: 'json, cross-site fetch', headers: { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' }, body: TASK_JSON, status: 403 },
];

function stateChanging(api: TestApi): Route[] {
  return registeredRoutes(api.app).filter((r) => !SAFE.has(r.method));
}

describe('state-changing requests from foreign web pages are refused (issue #10 item 2)', () => {
  let api: TestApi & { base: string };
  beforeAll(async () => {
    api = await listenApiApp({ extraYaml: 'api:\n  cors_origins: ["http://dash.example:8080", "*"]' });
    seedRun(api.root, P, T, R, {}, 'out\n');
    fs.writeFileSync(path.join(api.root, P, T, 'TASK.md'), 'x\n');
  });
  afterAll(async () => api.close());

  it('refuses cross-site form, text/plain and foreign-origin posts to every state-changing route, starting nothing', async () => {
    const routes = stateChanging(api);
    expect(routes.map((r) => `${r.method} ${r.url}`)).toEqual(expect.arrayContaining(['POST /api/v1/tasks', 'POST /api/projects/:p/tasks/:t/resume', 'DELETE /api/projects/:p']));
    const before = treeHash(api.dir);
    const failures: string[] = [];
    for (const route of routes) {
      const url = fillRoute(route.url, IDS);
      for (const attack of ATTACKS) {
        const res = await rawRequest(api.base, route.method, url, attack.headers, attack.body);
        const code = res.status === attack.status ? JSON.parse(res.body).error.code : undefined;
        const want = attack.status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : 'FORBIDDEN';
        if (res.status !== attack.status || code !== want) failures.push(`${route.method} ${url} ${attack.name} → ${res.status} ${res.body.slice(0, 120)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(treeHash(api.dir)).toBe(before);
    expect(fs.existsSync(path.join(api.root, P, 'task-20260101-120000-evil'))).toBe(false);
  });

  it('refuses them with a valid key too', async () => {
    const keyed = await listenApiApp({ apiKey: 'k-1' });
    try {
      const before = treeHash(keyed.dir);
      for (const attack of ATTACKS) {
        const res = await rawRequest(keyed.base, 'POST', '/api/v1/tasks', { ...attack.headers, authorization: 'Bearer k-1' }, attack.body);
        expect([attack.name, res.status]).toEqual([attack.name, attack.status]);
      }
      expect(treeHash(keyed.dir)).toBe(before);
    } finally {
      await keyed.close();
    }
  });

  it('accepts the server’s own origin, an allow-listed origin, same-origin fetches and clients without browser headers', async () => {
    const bus = path.join(api.root, P, 'PROJECT-MESSAGE-BUS.md');
    const post = (headers: Record<string, string>) => rawRequest(api.base, 'POST', `/api/projects/${P}/messages`, headers, JSON.stringify({ body: 'hello' }));
    expect((await post({})).status).toBe(201);
    expect((await post({ origin: api.base, 'sec-fetch-site': 'same-origin' })).status).toBe(201);
    expect((await post({ origin: 'http://dash.example:8080', 'sec-fetch-site': 'same-site' })).status).toBe(201);
    expect((await post({ 'content-type': 'application/json; charset=utf-8' })).status).toBe(201);
    expect(fs.readFileSync(bus, 'utf8').match(/^msg_id: /gm)?.length).toBe(4);
    // `*` in cors_origins opens CORS reads, not state changes.
    expect((await post({ origin: 'http://other.example' })).status).toBe(403);
    // A body-less POST (the CLI's stop) needs no content type.
    const stop = await rawRequest(api.base, 'POST', `/api/projects/${P}/tasks/${T}/runs/${R}/stop`);
    expect(stop.status).toBe(409);
    expect(JSON.parse(stop.body).error.message).toBe('run is not running');
  });

  it('leaves reads to CORS (cors_origins decides what a foreign page may read)', async () => {
    const res = await rawRequest(api.base, 'GET', `/api/projects/${P}`, { origin: EVIL, 'sec-fetch-site': 'cross-site' });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });
});
