import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readRunInfo } from '@app/storage';
import { envWithFakeAgents } from '../../utils/fake-agents';
import { waitFor } from '../../utils/wait';
import { cleanEnv, requireBuild, runAgentBin } from '../cli/bus-helpers';
import { call, callError } from './mcp-scenario';

const P = 'mcp-crit';
const T = 'task-20260101-120000-parent';
const RUN = '20260101-1200000000-4242-1';

describe('MCP task_start done_criteria (issue #33)', () => {
  let dir: string;
  let root: string;
  let client: Client;

  beforeAll(async () => {
    requireBuild();
    dir = mkdtempSync(join(tmpdir(), 'mcp-crit-'));
    root = join(dir, 'runs');
    mkdirSync(join(root, P, T), { recursive: true });
    const env = envWithFakeAgents({ ...(cleanEnv(dir) as Record<string, string>), FAKE_AGENT_DONE: '1' });
    env.PATH = envWithFakeAgents().PATH;
    const transport = new StdioClientTransport({ command: runAgentBin, args: ['mcp', '--root', root, '--project', P, '--task', T, '--run', RUN], env, stderr: 'pipe' });
    client = new Client({ name: 'mcp-criteria-test', version: '1.0.0' });
    await client.connect(transport);
  });

  afterAll(async () => {
    await client?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses bad criteria with the validator\'s reason and starts nothing', async () => {
    expect(await callError(client, 'task_start', { prompt: 'x', agent: 'claude', task: 'task-20260101-120000-badcrit', done_criteria: [' '] })).toBe(
      'done criterion 1 is empty: give a command such as "npm test"',
    );
    expect(await callError(client, 'task_start', { prompt: 'x', agent: 'claude', task: 'task-20260101-120000-badcrit', done_criteria: ['true'], done_criteria_timeout: 'soon' })).toMatch(
      /^done criteria timeout must be a duration between 1s and 24h/,
    );
    expect(existsSync(join(root, P, 'task-20260101-120000-badcrit'))).toBe(false);
  });

  it('a sub-task whose agent writes DONE while its criterion fails is not done: DONE is set aside', async () => {
    const task = 'task-20260101-120000-crit';
    const started = await call(client, 'task_start', { prompt: 'claim done', agent: 'claude', task, done_criteria: ['exit 4'] });
    const taskDir = join(root, P, task);
    const rejected = `DONE.rejected-${started.run_id}`;
    await waitFor('the rejected DONE', () => existsSync(join(taskDir, rejected)), { timeoutMs: 60_000 });
    await call(client, 'task_wait', { task, project: P, timeout_seconds: 60 });
    expect(readdirSync(taskDir).filter((f) => f.startsWith('DONE'))).toEqual([rejected]);
    expect(readRunInfo(join(taskDir, 'runs', started.run_id, 'run-info.yaml')).criteria).toMatchObject({ passed: false, results: [{ command: 'exit 4', exit_code: 4 }] });
  });
});
