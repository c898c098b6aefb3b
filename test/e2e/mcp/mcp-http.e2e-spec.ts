import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { listenApiApp, TestApi } from '../../utils/api-app';
import { askAndAwaitAnswer, call, callError, nextUpdate, startWaitAndReadOutput, TOOL_NAMES } from './mcp-scenario';

const KEY = 'mcp-test-key';
const P = 'mcp-http';
const T = 'task-20260101-120000-http';

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

describe('MCP over Streamable HTTP at /mcp (the SDK client)', () => {
  let api: TestApi & { base: string };
  let client: Client;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    // the server's task loops run the fake command agent in this process's environment
    for (const [k, v] of Object.entries({ FAKE_AGENT_DONE: '1', FAKE_AGENT_TEXT: 'http sub-agent output' })) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
    api = await listenApiApp({ apiKey: KEY });
    mkdirSync(join(api.root, P, T), { recursive: true });
    client = new Client({ name: 'mcp-http-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${api.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${KEY}` } } }));
  });

  afterAll(async () => {
    await client?.close();
    await api?.close();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  const post = (headers: Record<string, string>) =>
    fetch(`${api.base}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(initialize),
    });

  it('answers 401 without the API key', async () => {
    const res = await post({});
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: string }).error).toBe('unauthorized');
  });

  it('refuses a foreign Origin even with the key, and accepts the server own origin', async () => {
    const foreign = await post({ Authorization: `Bearer ${KEY}`, Origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    const crossSite = await post({ Authorization: `Bearer ${KEY}`, 'Sec-Fetch-Site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    const own = await post({ Authorization: `Bearer ${KEY}`, Origin: api.base });
    expect(own.status).toBe(200);
    await own.body?.cancel();
  });

  it('lists the tools; a root-wide session needs a project argument', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    expect(await callError(client, 'bus_post', { type: 'INFO', body: 'x' })).toMatch(/project is required/);
  });

  it('posts and reads messages; subscribers hear of them', async () => {
    const uri = `conductor://bus/${P}/${T}`;
    await client.subscribeResource({ uri });
    const updated = nextUpdate(client, uri);
    const posted = await call(client, 'bus_post', { project: P, task: T, type: 'QUESTION', body: 'over http?' });
    await expect(updated).resolves.toBe(uri);
    const read = await call(client, 'bus_read', { project: P, task: T });
    expect(read.messages.map((m: { msg_id: string; type: string; body: string }) => [m.msg_id, m.type, m.body])).toEqual([[posted.msg_id, 'QUESTION', 'over http?']]);
    expect(readFileSync(join(api.root, P, T, 'TASK-MESSAGE-BUS.md'), 'utf8')).toContain(`msg_id: ${posted.msg_id}`);
  });

  it('starts a task through the server launcher, waits for it and reads its output', async () => {
    const { started } = await startWaitAndReadOutput(client, { project: P, prompt: 'do the thing', agent: 'fake' }, 'http sub-agent output');
    expect(existsSync(join(api.root, P, started.task_id, 'DONE'))).toBe(true);
    expect((await call(client, 'list_projects', {})).projects).toEqual([P]);
  });

  it('ask (#17) waits for the answer given through the API; usage (#18) reports the project', async () => {
    const T2 = 'task-20260101-120000-ask';
    mkdirSync(join(api.root, P, T2), { recursive: true });
    await askAndAwaitAnswer(client, { project: P, task: T2 }, async (questionId) => {
      const res = await fetch(`${api.base}/api/projects/${P}/tasks/${T2}/answer`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ body: 'SQLite.', question_id: questionId }),
      });
      expect(res.status).toBe(201);
    });
    expect(await callError(client, 'ask', { body: 'x' })).toMatch(/project is required/);
    const usage = await call(client, 'usage', { project: P });
    expect(usage).toMatchObject({ project_id: P, runs: expect.any(Number), usage: expect.any(Object) });
  });

  it('refuses a task the API would refuse, with the API reason', async () => {
    const text = await callError(client, 'task_start', { project: P, prompt: 'x', agent: 'nope', task: 'task-20260101-120000-nope' });
    expect(text).toMatch(/^unknown agent_type "nope"/);
    expect(existsSync(join(api.root, P, 'task-20260101-120000-nope'))).toBe(false);
  });
});
