import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, ApiError, AuthRequiredError, describeError, ServerDownError, type KeyStorage } from '../src/api/client';

class MemoryStorage implements KeyStorage {
  private items = new Map<string, string>();
  getItem(k: string) {
    return this.items.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.items.set(k, v);
  }
  removeItem(k: string) {
    this.items.delete(k);
  }
}

// A real HTTP server on 127.0.0.1 that wants the key "k1" and records what it receives.
let server: Server;
let base = '';
const seen: { url: string; method: string; headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', method: req.method ?? '', headers: req.headers, body });
      if (req.headers.authorization !== 'Bearer k1') {
        res.writeHead(401, { 'Content-Type': 'application/json' });
        res.end('{"error":"unauthorized","message":"valid API key required"}');
        return;
      }
      const url = new URL(req.url ?? '', 'http://x');
      const list = { '/api/projects': 'projects', '/api/projects/p1/runs/flat': 'runs', '/api/v1/questions': 'questions' }[url.pathname];
      if (req.method === 'GET' && list) {
        // cursor-paged (issue #29): two pages, the second after=c1
        const after = url.searchParams.get('after');
        const item = list === 'projects' ? { id: after ? 'p2' : 'p1', last_activity: '2026-01-01T00:00:00Z', task_count: 1 } : { id: after ? 'x2' : 'x1' };
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ [list]: [item], ...(after === 'c1' ? { has_more: false } : { has_more: true, next_cursor: 'c1' }) }));
      } else if (req.url?.startsWith('/api/projects/p1/tasks?')) {
        const offset = Number(new URL(req.url, 'http://x').searchParams.get('offset'));
        const items = offset === 0 ? [{ id: 'task-a' }, { id: 'task-b' }] : [{ id: 'task-c' }];
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ items, total: 3, limit: 500, offset, has_more: offset === 0 }));
      } else if (req.method === 'POST' && req.url === '/api/projects/p1/messages') {
        res.writeHead(201, { 'Content-Type': 'application/json' });
        res.end('{"msg_id":"MSG-1","timestamp":"2026-01-01T00:00:00Z"}');
      } else {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end('{"error":{"code":"NOT_FOUND","message":"task not found"}}');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('ApiClient', () => {
  it('asks for a key on 401, then sends it as a Bearer header with the web-ui client header', async () => {
    const storage = new MemoryStorage();
    const client = new ApiClient(base, storage);
    let prompts = 0;
    client.onAuthRequired(() => prompts++);
    await expect(client.projects()).rejects.toBeInstanceOf(AuthRequiredError);
    expect(prompts).toBe(1);
    expect(seen.at(-1)!.headers['x-conductor-client']).toBe('web-ui');

    client.setApiKey('k1');
    expect(storage.getItem('conductor.apiKey')).toBe('k1');
    expect(await client.projects()).toEqual(['p1', 'p2'].map((id) => ({ id, last_activity: '2026-01-01T00:00:00Z', task_count: 1 })));
    const last = seen.at(-1)!;
    expect(last.headers.authorization).toBe('Bearer k1');
    expect(last.headers['x-conductor-client']).toBe('web-ui');
  });

  it('puts the key in ?api_key= on stream URLs, since EventSource cannot send headers', () => {
    const client = new ApiClient('', new MemoryStorage());
    expect(client.streamUrl('/api/v1/runs/stream/all')).toBe('/api/v1/runs/stream/all');
    client.setApiKey('a b&c');
    expect(client.streamUrl('/api/v1/runs/stream/all')).toBe('/api/v1/runs/stream/all?api_key=a%20b%26c');
    expect(client.streamUrl(client.runStreamPath('p', 't', 'r', 'stdout'))).toBe('/api/projects/p/tasks/t/runs/r/stream?name=stdout&api_key=a%20b%26c');
    client.setApiKey(null);
    expect(client.apiKey).toBeNull();
  });

  it('pages through the task list and posts messages as {type, body}', async () => {
    const storage = new MemoryStorage();
    storage.setItem('conductor.apiKey', 'k1');
    const client = new ApiClient(base, storage);
    expect((await client.tasks('p1')).map((t) => t.id)).toEqual(['task-a', 'task-b', 'task-c']);
    await client.postMessage('p1', undefined, 'QUESTION', 'why?');
    const post = seen.at(-1)!;
    expect(post.method).toBe('POST');
    expect(JSON.parse(post.body)).toEqual({ type: 'QUESTION', body: 'why?' });
    expect(post.headers['content-type']).toBe('application/json');
  });

  it('follows next_cursor on the cursor-paged lists (projects, runs/flat, questions), asking for the largest page', async () => {
    const storage = new MemoryStorage();
    storage.setItem('conductor.apiKey', 'k1');
    const client = new ApiClient(base, storage);
    const from = seen.length;
    expect((await client.flatRuns('p1')).map((r) => r.id)).toEqual(['x1', 'x2']);
    expect((await client.openQuestions()).map((q) => (q as unknown as { id: string }).id)).toEqual(['x1', 'x2']);
    expect(seen.slice(from).map((r) => r.url)).toEqual([
      '/api/projects/p1/runs/flat?limit=5000',
      '/api/projects/p1/runs/flat?limit=5000&after=c1',
      '/api/v1/questions?limit=5000',
      '/api/v1/questions?limit=5000&after=c1',
    ]);
  });

  it('turns error envelopes and network failures into readable errors', async () => {
    const storage = new MemoryStorage();
    storage.setItem('conductor.apiKey', 'k1');
    const client = new ApiClient(base, storage);
    const err = await client.taskFile('p1', 'nope').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(404);
    expect(describeError(err)).toBe('Server error 404: task not found');

    const down = new ApiClient('http://127.0.0.1:1', storage);
    const downErr = await down.projects().catch((e: unknown) => e);
    expect(downErr).toBeInstanceOf(ServerDownError);
    expect(describeError(downErr)).toMatch(/Cannot reach the conductor server/);
  });
});
