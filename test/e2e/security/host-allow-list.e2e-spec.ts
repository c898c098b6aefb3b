// Issue #29, DNS rebinding: every route family answers only requests that name this server in
// `Host` (loopback names on the listening port, plus api.allowed_hosts); /mcp also refuses a
// foreign Origin. Real sockets (the port check needs one); the Host header is sent as written.
import * as fs from 'node:fs';
import * as net from 'node:net';
import { join } from 'node:path';
import { listenApiApp, type TestApi } from '../../utils/api-app';
import { rawRequest } from '../api/security-helpers';

const KEY = 'host-check-key';
const P = 'rebind';
const TASK_BODY = JSON.stringify({ project_id: P, task_id: 'task-20260101-120000-rebind', agent_type: 'fake', prompt: 'hi' });
const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** One request per route family: REST reads and writes, SSE, /mcp, the dashboard, metrics, a 404, health, the PRM document. */
const FAMILIES: { name: string; method: string; path: string; headers?: Record<string, string>; body?: string }[] = [
  { name: 'REST GET /api/v1/tasks', method: 'GET', path: `/api/v1/tasks?project_id=${P}` },
  { name: 'REST POST /api/v1/tasks', method: 'POST', path: '/api/v1/tasks', headers: { 'content-type': 'application/json' }, body: TASK_BODY },
  { name: 'SSE stream', method: 'GET', path: `/api/projects/${P}/messages/stream`, headers: { accept: 'text/event-stream' } },
  { name: '/mcp initialize', method: 'POST', path: '/mcp', headers: MCP_HEADERS, body: INITIALIZE },
  { name: '/ui/', method: 'GET', path: '/ui/' },
  { name: '/metrics', method: 'GET', path: '/metrics' },
  { name: 'an unmatched path', method: 'GET', path: '/no/such/route' },
  { name: '/healthz', method: 'GET', path: '/healthz' },
  { name: 'protected-resource metadata', method: 'GET', path: '/.well-known/oauth-protected-resource/mcp' },
];

/** An HTTP/1.0 request without any Host header (HTTP/1.1 makes Node itself answer 400). */
function requestWithoutHost(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.0\r\n\r\n`));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => (text += d));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

describe('Host allow-list (DNS rebinding, issue #29)', () => {
  describe('without a key (the old default that a rebinding page could drive)', () => {
    let api: TestApi & { base: string };
    let port: number;
    beforeAll(async () => {
      api = await listenApiApp();
      port = Number(new URL(api.base).port);
      fs.mkdirSync(join(api.root, P), { recursive: true });
    });
    afterAll(() => api?.close());

    it.each(FAMILIES)('a foreign Host gets 403 with a one-line JSON reason: $name', async (f) => {
      const res = await rawRequest(api.base, f.method, f.path, { ...f.headers, host: `evil.example:${port}` }, f.body);
      expect(res.status).toBe(403);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const body = JSON.parse(res.body) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('FORBIDDEN');
      expect(body.error.message).toContain('"evil.example:');
      expect(body.error.message).not.toContain('\n');
    });

    it('started no task and wrote nothing for the foreign requests', () => {
      expect(fs.readdirSync(join(api.root, P))).toEqual([]);
    });

    it.each(FAMILIES.filter((f) => f.method === 'GET' && f.path !== '/no/such/route'))('its own name is served: $name', async (f) => {
      const res = await rawRequest(api.base, f.method, f.path, { ...f.headers, host: `127.0.0.1:${port}` });
      expect(res.status).toBe(200);
    });

    it('decides on the parsed name and port, not on spellings', async () => {
      const status = async (host: string) => (await rawRequest(api.base, 'GET', '/api/v1/health', { host })).status;
      for (const ok of [`localhost:${port}`, `LOCALHOST:${port}`, `localhost.:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `[0:0::1]:${port}`]) expect([ok, await status(ok)]).toEqual([ok, 200]);
      for (const bad of [
        `127.0.0.1.evil.com:${port}`,
        `localhost.evil.com:${port}`,
        `evil.com.localhost:${port}`,
        `evil@localhost:${port}`,
        `localhost:${port + 1 > 65535 ? port - 1 : port + 1}`,
        'localhost',
        `localhost:${port}:${port}`,
        `127.0.0.2:${port}`,
      ]) {
        expect([bad, await status(bad)]).toEqual([bad, 403]);
      }
      expect(await requestWithoutHost(port, '/api/v1/health')).toMatch(/^HTTP\/1\.1 403 .*[^]*missing Host header/);
    });

    it('frames no page: X-Frame-Options and CSP frame-ancestors on the dashboard and the API', async () => {
      for (const path of ['/ui/', '/api/v1/health', '/no/such/route']) {
        const res = await rawRequest(api.base, 'GET', path);
        expect(res.headers['x-frame-options']).toBe('DENY');
        expect(res.headers['content-security-policy']).toBe("frame-ancestors 'none'");
      }
    });

    it('/mcp refuses a foreign Origin and accepts its own', async () => {
      const post = (origin: string) => rawRequest(api.base, 'POST', '/mcp', { ...MCP_HEADERS, origin }, INITIALIZE);
      expect((await post('http://evil.example')).status).toBe(403);
      expect((await post(`http://localhost:${port + 1 > 65535 ? port - 1 : port + 1}`)).status).toBe(403);
      expect((await post('null')).status).toBe(403);
      expect((await post(`http://localhost:${port}`)).status).toBe(200);
    });
  });

  describe('api.allowed_hosts', () => {
    let api: TestApi & { base: string };
    beforeAll(async () => {
      api = await listenApiApp({ apiKey: KEY, extraYaml: 'api:\n  allowed_hosts: ["conductor.example", "pinned.example:8443"]' });
    });
    afterAll(() => api?.close());

    it('adds names (any port, or the one given) and nothing else', async () => {
      const status = async (host: string) => (await rawRequest(api.base, 'GET', '/api/v1/health', { host })).status;
      expect(await status('conductor.example')).toBe(200);
      expect(await status('Conductor.Example:9999')).toBe(200);
      expect(await status('pinned.example:8443')).toBe(200);
      expect(await status('pinned.example:8444')).toBe(403);
      expect(await status('evil.conductor.example')).toBe(403);
      expect(await status('conductor.example.evil.com')).toBe(403);
    });

    it('an Origin naming an allowed host may post to /mcp', async () => {
      const res = await rawRequest(api.base, 'POST', '/mcp', { ...MCP_HEADERS, authorization: `Bearer ${KEY}`, host: 'conductor.example', origin: 'https://conductor.example' }, INITIALIZE);
      expect(res.status).toBe(200);
    });
  });

  describe('protected-resource metadata for /mcp (RFC 9728)', () => {
    let api: TestApi & { base: string };
    beforeAll(async () => {
      api = await listenApiApp({ apiKey: KEY });
    });
    afterAll(() => api?.close());

    it('is public and names /mcp as a bearer-token resource', async () => {
      for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
        const res = await rawRequest(api.base, 'GET', path);
        expect(res.status).toBe(200);
        expect(JSON.parse(res.body)).toMatchObject({ resource: `${api.base}/mcp`, bearer_methods_supported: ['header'], authorization_servers: [] });
      }
    });

    it('a 401 from /mcp points at it in WWW-Authenticate', async () => {
      const res = await rawRequest(api.base, 'POST', '/mcp', MCP_HEADERS, INITIALIZE);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe(`Bearer realm="conductor", resource_metadata="${api.base}/.well-known/oauth-protected-resource/mcp"`);
    });
  });
});
