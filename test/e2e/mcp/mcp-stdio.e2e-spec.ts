import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { envWithFakeAgents } from '../../utils/fake-agents';
import { cleanEnv, requireBuild, runAgentBin, runCli } from '../cli/bus-helpers';
import { askAndAwaitAnswer, call, callError, nextUpdate, normaliseBus, startWaitAndReadOutput, TOOL_NAMES, usageOfSubTask } from './mcp-scenario';
import { readRunInfo } from '@app/storage';

const P = 'mcp-proj';
const T = 'task-20260101-120000-parent';
const RUN = '20260101-1200000000-4242-1';

describe('run-agent mcp over stdio (the SDK client)', () => {
  let dir: string;
  let root: string;
  let env: Record<string, string>;
  let client: Client;
  let transport: StdioClientTransport;

  beforeAll(async () => {
    requireBuild();
    dir = mkdtempSync(join(tmpdir(), 'mcp-stdio-'));
    root = join(dir, 'runs');
    mkdirSync(join(root, P, T), { recursive: true });
    env = envWithFakeAgents({ ...(cleanEnv(dir) as Record<string, string>), FAKE_AGENT_TEXT: 'sub-agent says hi' });
    env.PATH = envWithFakeAgents().PATH;
    transport = new StdioClientTransport({ command: runAgentBin, args: ['mcp', '--root', root, '--project', P, '--task', T, '--run', RUN], env, stderr: 'pipe' });
    client = new Client({ name: 'mcp-stdio-test', version: '1.0.0' });
    await client.connect(transport);
  });

  afterAll(async () => {
    await client?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the tools under their contract names', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
  });

  it('bus_post writes byte for byte what `run-agent bus post` writes from the same scope', async () => {
    const body = 'line one\n---\nnot a fence';
    const posted = await call(client, 'bus_post', { type: 'FACT', body, parents: ['20260101-120000000000000-p1-1'] });
    expect(posted.msg_id).toEqual(expect.any(String));

    const otherRoot = join(dir, 'cli-runs');
    mkdirSync(join(otherRoot, P, T), { recursive: true });
    const cli = runCli(['bus', 'post', '--root', otherRoot, '--project', P, '--task', T, '--run', RUN, '--type', 'FACT', '--body', body, '--parent', '20260101-120000000000000-p1-1'], { env });
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    const viaMcp = readFileSync(join(root, P, T, 'TASK-MESSAGE-BUS.md'), 'utf8');
    const viaCli = readFileSync(join(otherRoot, P, T, 'TASK-MESSAGE-BUS.md'), 'utf8');
    expect(viaMcp).toContain(`msg_id: ${posted.msg_id}`);
    expect(normaliseBus(viaMcp)).toBe(normaliseBus(viaCli));

    const read = await call(client, 'bus_read', {});
    expect(read.messages.map((m: { msg_id: string; body: string; run_id: string }) => [m.msg_id, m.body, m.run_id])).toEqual([[posted.msg_id, body, RUN]]);
  });

  it('bus_read pages forward from a msg id', async () => {
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push((await call(client, 'bus_post', { type: 'PROGRESS', body: `step ${n}` })).msg_id);
    const first = await call(client, 'bus_read', { since: ids[0], limit: 1 });
    expect(first.messages.map((m: { body: string }) => m.body)).toEqual(['step 2']);
    expect(first.has_more).toBe(true);
    const next = await call(client, 'bus_read', { since: first.next_since, limit: 5 });
    expect(next.messages.map((m: { body: string }) => m.body)).toEqual(['step 3']);
    expect(next.has_more).toBe(false);
  });

  it('refuses bad input with the CLI reasons and writes nothing', async () => {
    const bus = join(root, P, T, 'TASK-MESSAGE-BUS.md');
    const before = readFileSync(bus, 'utf8');
    expect(await callError(client, 'bus_post', { type: ' ', body: 'x' })).toBe('type must not be empty');
    expect(await callError(client, 'bus_post', { type: 'INFO', body: 'x', task: '../etc' })).toMatch(/invalid task/i);
    expect(await callError(client, 'bus_post', { type: 'INFO', body: 'x'.repeat(16 * 1024 * 1024 + 1) })).toMatch(/over the 16777216-byte limit/);
    expect(await callError(client, 'bus_read', { since: 'no-such-id' })).toMatch(/not found/);
    expect(await callError(client, 'task_start', { prompt: '   ' })).toBe('prompt is empty');
    expect(await callError(client, 'task_start', { prompt: 'x', agent: 'no-such-agent', task: 'task-20260101-120000-refused' })).toBe('unknown agent type "no-such-agent": without a config the agent must be a type: claude, codex, gemini, perplexity, xai');
    expect(readFileSync(bus, 'utf8')).toBe(before);
    expect(existsSync(join(root, P, 'task-20260101-120000-refused'))).toBe(false);
  });

  it('notifies a subscriber of the task bus on a new message', async () => {
    const uri = `conductor://bus/${P}/${T}`;
    await client.subscribeResource({ uri });
    const updated = nextUpdate(client, uri);
    await call(client, 'bus_post', { type: 'INFO', body: 'ping subscribers' });
    await expect(updated).resolves.toBe(uri);
    const res = await client.readResource({ uri });
    const doc = JSON.parse((res.contents[0] as { text: string }).text);
    expect(doc.messages.at(-1).body).toBe('ping subscribers');
  });

  it('starts a sub-task with the fake claude as a child of the scoped run, waits for it and reads its output', async () => {
    const { started } = await startWaitAndReadOutput(client, { prompt: 'say hi', agent: 'claude' }, 'sub-agent says hi');
    expect(started.project_id).toBe(P);
    const status = await call(client, 'task_status', { task: started.task_id });
    expect(status.runs[0].parent_run_id).toBe(RUN);
    const tasks = await call(client, 'list_tasks', {});
    expect(tasks.tasks.map((t: { task_id: string }) => t.task_id)).toEqual(expect.arrayContaining([T, started.task_id]));
    expect((await call(client, 'list_projects', {})).projects).toEqual([P]);
  });

  it('ask (#17): posts the QUESTION in the scoped task, waits, and returns the answer given with `run-agent answer`', async () => {
    const open = await askAndAwaitAnswer(client, {}, async (questionId) => {
      const r = runCli(['answer', '--root', root, '--project', P, '--task', T, '--question', questionId, '--body', 'SQLite.'], { env });
      expect(r.code).toBe(0);
    });
    const status = runCli(['status', '--root', root, '--project', P, '--task', T, '--json'], { env });
    expect(JSON.parse(status.stdout).tasks[0]).toMatchObject({ status: 'needs_input', open_questions: 1 });
    expect(runCli(['answer', '--root', root, '--project', P, '--task', T, '--question', open, '--body', 'fine'], { env }).code).toBe(0);
    expect(await callError(client, 'ask', { body: 'x', type: 'RANT' })).toBe('type must be QUESTION or BLOCKED, got "RANT"');
    expect(await callError(client, 'ask', { body: '  ' })).toBe('question body is empty');
    expect(await callError(client, 'ask', { body: 'x', task: '../etc' })).toMatch(/invalid task/i);
  });

  it('usage (#18): a finished sub-task\'s tree usage equals its run-info; bad input is a tool error', async () => {
    const { started } = await startWaitAndReadOutput(client, { prompt: 'count tokens', agent: 'claude' }, 'sub-agent says hi');
    const info = readRunInfo(join(root, P, started.task_id, 'runs', started.run_id, 'run-info.yaml'));
    expect(info.usage).toEqual({ input_tokens: 1834, output_tokens: 57, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.0123 });
    await usageOfSubTask(client, P, started.task_id, info.usage as never);
    expect(await callError(client, 'usage', { since: 'yesterday' })).toBe('since must be an RFC 3339 time, got "yesterday"');
    expect(await callError(client, 'usage', { project: '../x' })).toMatch(/invalid project/i);
  });
});

describe('run-agent mcp scope', () => {
  let dir: string;
  beforeAll(() => {
    requireBuild();
    dir = mkdtempSync(join(tmpdir(), 'mcp-scope-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('takes project, task and run from the JRUN_* variables of the agent that starts it', async () => {
    const root = join(dir, 'runs');
    const runFolder = join(root, P, T, 'runs', RUN);
    mkdirSync(runFolder, { recursive: true });
    const env = { ...(cleanEnv(dir) as Record<string, string>), JRUN_PROJECT_ID: P, JRUN_TASK_ID: T, JRUN_ID: RUN, JRUN_TASK_FOLDER: join(root, P, T), JRUN_RUN_FOLDER: runFolder };
    const client = new Client({ name: 'scope-test', version: '1' });
    await client.connect(new StdioClientTransport({ command: runAgentBin, args: ['mcp'], env, stderr: 'pipe' }));
    try {
      const posted = await call(client, 'bus_post', { type: 'INFO', body: 'from the agent' });
      expect(posted.bus).toBe(join(root, P, T, 'TASK-MESSAGE-BUS.md'));
      const read = await call(client, 'bus_read', {});
      expect(read.messages.map((m: { project_id: string; task_id: string; run_id: string }) => [m.project_id, m.task_id, m.run_id])).toEqual([[P, T, RUN]]);
    } finally {
      await client.close();
    }
  });

  it('refuses an invalid scope flag with one line and exit 2', () => {
    const r = runCli(['mcp', '--root', join(dir, 'runs'), '--project', '../escape'], { env: cleanEnv(dir) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^Error: invalid project ID[^\n]*\n$/);
    expect(r.stdout).toBe('');
  });
});
