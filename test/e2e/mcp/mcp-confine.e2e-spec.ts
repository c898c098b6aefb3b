/**
 * #29: `run-agent mcp --project P` / `--task T` confine the session. Tools and resources outside
 * the project (or outside T, its descendant tasks and the tasks the session starts) are refused
 * with one clear error; listings hold only what is inside. Without the flags nothing is confined.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { envWithFakeAgents } from '../../utils/fake-agents';
import { writeRun } from '../../utils/run-fixtures';
import { cleanEnv, requireBuild, runAgentBin } from '../cli/bus-helpers';
import { call, callError } from './mcp-scenario';

const A = 'proj-a';
const B = 'proj-b';
const T = 'task-20260101-120000-mine';
const CHILD = 'task-20260101-120100-child';
const GRANDCHILD = 'task-20260101-120200-grandchild';
const OTHER = 'task-20260101-120300-other';
const T_RUN = '20260101-1200000000-100-1';
const CHILD_RUN = '20260101-1201000000-101-1';

describe('run-agent mcp --project / --task confine the session', () => {
  let dir: string;
  let root: string;
  let env: Record<string, string>;
  const clients: Client[] = [];

  const connect = async (args: string[]): Promise<Client> => {
    const client = new Client({ name: 'mcp-confine-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: runAgentBin, args: ['mcp', '--root', root, ...args], env, stderr: 'pipe', cwd: dir }));
    clients.push(client);
    return client;
  };
  const busText = (p: string, t: string) => readFileSync(join(root, p, t, 'TASK-MESSAGE-BUS.md'), 'utf8');

  beforeAll(() => {
    requireBuild();
    dir = mkdtempSync(join(tmpdir(), 'mcp-confine-'));
    root = join(dir, 'runs');
    writeRun(root, A, T, T_RUN, { status: 'completed', exit_code: 0 });
    writeRun(root, A, CHILD, CHILD_RUN, { status: 'completed', exit_code: 0, parent_run_id: T_RUN });
    writeRun(root, A, GRANDCHILD, '20260101-1202000000-102-1', { status: 'completed', exit_code: 0, parent_run_id: CHILD_RUN });
    writeRun(root, A, OTHER, '20260101-1203000000-103-1', { status: 'completed', exit_code: 0 });
    mkdirSync(join(root, B, OTHER), { recursive: true });
    env = envWithFakeAgents({ ...(cleanEnv(dir) as Record<string, string>), FAKE_AGENT_TEXT: 'confined sub-task' });
    env.PATH = envWithFakeAgents().PATH;
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('--project: another project is refused by every tool and resource; listings hold only the project', async () => {
    const client = await connect(['--project', A]);
    const refused = `project ${B} is outside this session's scope (run-agent mcp --project ${A})`;
    expect(await callError(client, 'bus_post', { project: B, task: OTHER, type: 'INFO', body: 'x' })).toBe(refused);
    expect(await callError(client, 'bus_read', { project: B })).toBe(refused);
    expect(await callError(client, 'task_status', { project: B, task: OTHER })).toBe(refused);
    expect(await callError(client, 'task_stop', { project: B, task: OTHER })).toBe(refused);
    expect(await callError(client, 'task_start', { project: B, prompt: 'x', agent: 'claude' })).toBe(refused);
    expect(await callError(client, 'list_tasks', { project: B })).toBe(refused);
    expect(await callError(client, 'usage', { project: B })).toBe(refused);
    expect(await callError(client, 'ask', { project: B, task: OTHER, body: 'x' })).toBe(refused);
    await expect(client.readResource({ uri: `conductor://bus/${B}/${OTHER}` })).rejects.toThrow(refused);
    await expect(client.subscribeResource({ uri: `conductor://bus/${B}` })).rejects.toThrow(refused);
    expect(existsSync(join(root, B, OTHER, 'TASK-MESSAGE-BUS.md'))).toBe(false);
    expect(existsSync(join(root, B, 'PROJECT-MESSAGE-BUS.md'))).toBe(false);

    expect((await call(client, 'list_projects', {})).projects).toEqual([A]);
    expect((await call(client, 'list_tasks', {})).tasks.map((t: { task_id: string }) => t.task_id).sort()).toEqual([CHILD, GRANDCHILD, T, OTHER].sort());
    expect((await call(client, 'task_status', { task: OTHER })).state).toBe('completed');
    const { resources } = await client.listResources();
    expect(resources.length).toBeGreaterThan(0);
    expect(resources.every((r) => r.uri.startsWith(`conductor://bus/${A}`) || r.uri.startsWith(`conductor://runs/${A}/`))).toBe(true);
  });

  it('--task: the task, its descendant tasks and the tasks it starts are in scope; siblings, the project bus and other projects are refused', async () => {
    const client = await connect(['--project', A, '--task', T, '--run', T_RUN]);
    const refusedTask = (t: string) => `task ${t} is outside this session's scope (run-agent mcp --project ${A} --task ${T})`;
    expect(await callError(client, 'task_status', { task: OTHER })).toBe(refusedTask(OTHER));
    expect(await callError(client, 'task_stop', { task: OTHER })).toBe(refusedTask(OTHER));
    expect(await callError(client, 'bus_post', { task: OTHER, type: 'INFO', body: 'x' })).toBe(refusedTask(OTHER));
    expect(await callError(client, 'bus_read', { task: OTHER })).toBe(refusedTask(OTHER));
    expect(await callError(client, 'task_start', { task: OTHER, prompt: 'x', agent: 'claude' })).toBe(refusedTask(OTHER));
    expect(await callError(client, 'usage', { task: OTHER })).toBe(refusedTask(OTHER));
    expect(await callError(client, 'bus_read', { project: B, task: OTHER })).toMatch(/^project proj-b is outside this session's scope/);
    await expect(client.readResource({ uri: `conductor://bus/${A}` })).rejects.toThrow(`the bus of project ${A} is outside this session's scope`);
    await expect(client.readResource({ uri: `conductor://runs/${A}/${OTHER}/20260101-1203000000-103-1/output` })).rejects.toThrow(refusedTask(OTHER));
    expect(existsSync(join(root, A, OTHER, 'TASK-MESSAGE-BUS.md'))).toBe(false);

    // descendants at any depth are in scope
    expect((await call(client, 'task_status', { task: GRANDCHILD })).state).toBe('completed');
    await call(client, 'bus_post', { task: CHILD, type: 'INFO', body: 'to my sub-task' });
    expect(busText(A, CHILD)).toContain('to my sub-task');
    await call(client, 'bus_post', { type: 'INFO', body: 'to my own bus' });
    expect(busText(A, T)).toContain('to my own bus');

    // a task started in this session is in scope, and listed
    const started = await call(client, 'task_start', { prompt: 'go', agent: 'claude' });
    const waited = await call(client, 'task_wait', { task: started.task_id, timeout_seconds: 90 });
    expect(waited.state).toBe('completed');
    expect((await call(client, 'list_projects', {})).projects).toEqual([A]);
    expect((await call(client, 'list_tasks', {})).tasks.map((t: { task_id: string }) => t.task_id).sort()).toEqual([CHILD, GRANDCHILD, T, started.task_id].sort());
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).not.toContain(`conductor://bus/${A}`);
    expect(resources.some((r) => r.uri.includes(OTHER))).toBe(false);
    expect(resources.map((r) => r.uri)).toEqual(expect.arrayContaining([`conductor://bus/${A}/${T}`, `conductor://bus/${A}/${started.task_id}`]));
  });

  it('without the flags nothing is confined', async () => {
    const client = await connect([]);
    expect((await call(client, 'list_projects', {})).projects.sort()).toEqual([A, B]);
    expect((await call(client, 'task_status', { project: A, task: OTHER })).state).toBe('completed');
  });
});
