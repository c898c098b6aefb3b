/**
 * #30 defect 5: a task started with task_start over stdio outlives the MCP session. The official
 * SDK client closes stdin, waits 2 s and SIGTERMs the server; the task's runner is detached (own
 * session and process group), so the run still ends normally: DONE, run-info completed, RUN_STOP.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readRunInfo } from '@app/storage';
import { envWithFakeAgents } from '../../utils/fake-agents';
import { writeRun } from '../../utils/run-fixtures';
import { webhookReceiver } from '../../utils/webhook-receiver';
import { waitFor } from '../../utils/wait';
import { cleanEnv, requireBuild, runAgentBin, runCli } from '../cli/bus-helpers';
import { call } from './mcp-scenario';

const P = 'mcp-detach';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('run-agent mcp over stdio: task_start tasks outlive the session', () => {
  let dir: string;

  beforeAll(() => {
    requireBuild();
    dir = mkdtempSync(join(tmpdir(), 'mcp-detach-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a client that hangs up (stdin closed, then SIGTERM) leaves the started task running to completion, run_stop webhook included', async () => {
    const root = join(dir, 'runs');
    mkdirSync(join(root, P), { recursive: true });
    const release = join(dir, 'release');
    const hook = await webhookReceiver();
    const config = join(dir, 'hook-config.yaml');
    writeFileSync(config, ['agents:', '  claude:', '    type: claude', 'webhook:', `  url: ${hook.url}`, '  events: [run_stop]', ''].join('\n'));
    const env = envWithFakeAgents({ ...(cleanEnv(dir) as Record<string, string>), FAKE_AGENT_TEXT: 'outlived the session', FAKE_AGENT_WAIT_FILE: release, FAKE_AGENT_DONE: '1' });
    env.PATH = envWithFakeAgents().PATH;
    const transport = new StdioClientTransport({ command: runAgentBin, args: ['mcp', '--root', root, '--project', P, '--config', config], env, stderr: 'pipe', cwd: dir });
    const client = new Client({ name: 'mcp-detach-test', version: '1.0.0' });
    await client.connect(transport);
    const serverPid = transport.pid!;
    const started = await call(client, 'task_start', { prompt: 'live past the client', agent: 'claude' });
    const runDir = join(root, P, started.task_id, 'runs', started.run_id);
    const taskDir = join(root, P, started.task_id);
    // the agent is up (its pid recorded) before the client goes away
    await waitFor('the agent running', () => {
      const info = existsSync(join(runDir, 'run-info.yaml')) ? readRunInfo(join(runDir, 'run-info.yaml')) : undefined;
      return info?.status === 'running' && info.pid > 0 ? info : undefined;
    });

    await client.close();
    await waitFor('the MCP server gone', () => !alive(serverPid), { timeoutMs: 20_000 });
    expect(readRunInfo(join(runDir, 'run-info.yaml')).status).toBe('running');

    writeFileSync(release, '');
    const info = await waitFor('the run completed', () => {
      const i = readRunInfo(join(runDir, 'run-info.yaml'));
      return i.status !== 'running' ? i : undefined;
    }, { timeoutMs: 60_000 });
    expect(info).toMatchObject({ status: 'completed', exit_code: 0 });
    expect(existsSync(join(taskDir, 'DONE'))).toBe(true);
    expect(readFileSync(join(runDir, 'output.md'), 'utf8')).toContain('outlived the session');
    await waitFor('RUN_STOP on the task bus', () => /type: RUN_STOP/.test(readFileSync(join(taskDir, 'TASK-MESSAGE-BUS.md'), 'utf8')));
    try {
      const delivered = await waitFor('the run_stop webhook', () => hook.received.find((r) => r.body.includes(started.run_id)));
      expect(JSON.parse(delivered.body)).toMatchObject({ event: 'run_stop', run_id: started.run_id });
    } finally {
      await hook.close();
    }
  });

  it('SIGTERM to the MCP server\'s whole process group, with the client still connected, leaves the task running to completion', async () => {
    const root = join(dir, 'runs-pg');
    mkdirSync(join(root, P), { recursive: true });
    const release = join(dir, 'release-pg');
    const env = envWithFakeAgents({ ...(cleanEnv(dir) as Record<string, string>), FAKE_AGENT_TEXT: 'survived the group', FAKE_AGENT_WAIT_FILE: release, FAKE_AGENT_DONE: '1' });
    env.PATH = envWithFakeAgents().PATH;
    // the server leads its own process group, as under a shell or a supervisor
    const server = spawn(runAgentBin, ['mcp', '--root', root, '--project', P], { env, cwd: dir, detached: true, stdio: ['pipe', 'pipe', 'ignore'] });
    const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
    let buffered = '';
    const replies = new Map<number, (v: { result?: { content: { text: string }[]; isError?: boolean } }) => void>();
    server.stdout!.on('data', (d: Buffer) => {
      buffered += d.toString();
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const msg = JSON.parse(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
        if (typeof msg.id === 'number') replies.get(msg.id)?.(msg);
      }
    });
    let nextId = 1;
    const request = (method: string, params: unknown) =>
      new Promise<{ result?: { content: { text: string }[]; isError?: boolean } }>((resolve) => {
        const id = nextId++;
        replies.set(id, resolve);
        server.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      });
    await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
    server.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    const res = await request('tools/call', { name: 'task_start', arguments: { prompt: 'outlive the group', agent: 'claude' } });
    expect(res.result?.isError).toBeFalsy();
    const started = JSON.parse(res.result!.content[0].text) as { task_id: string; run_id: string };
    const taskDir = join(root, P, started.task_id);
    const runDir = join(taskDir, 'runs', started.run_id);
    await waitFor('the agent running', () => {
      const info = existsSync(join(runDir, 'run-info.yaml')) ? readRunInfo(join(runDir, 'run-info.yaml')) : undefined;
      return info?.status === 'running' && info.pid > 0 ? info : undefined;
    });

    process.kill(-server.pid!, 'SIGTERM');
    await exited;
    expect(readRunInfo(join(runDir, 'run-info.yaml')).status).toBe('running');

    writeFileSync(release, '');
    const info = await waitFor('the run completed', () => {
      const i = readRunInfo(join(runDir, 'run-info.yaml'));
      return i.status !== 'running' ? i : undefined;
    }, { timeoutMs: 60_000 });
    expect(info).toMatchObject({ status: 'completed', exit_code: 0 });
    expect(existsSync(join(taskDir, 'DONE'))).toBe(true);
    expect(readFileSync(join(runDir, 'output.md'), 'utf8')).toContain('survived the group');
  });

  it('a job that fails before recording its run (config broken since the server loaded it) leaves a failed run-info with the reason', async () => {
    const root = join(dir, 'runs-broken');
    mkdirSync(join(root, P), { recursive: true });
    const config = join(dir, 'broken-config.yaml');
    writeFileSync(config, ['agents:', '  claude:', '    type: claude', ''].join('\n'));
    const env = envWithFakeAgents(cleanEnv(dir) as Record<string, string>);
    env.PATH = envWithFakeAgents().PATH;
    const client = new Client({ name: 'mcp-broken-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: runAgentBin, args: ['mcp', '--root', root, '--project', P, '--config', config], env, stderr: 'pipe', cwd: dir }));
    try {
      writeFileSync(config, 'agents: [\n');
      const started = await call(client, 'task_start', { prompt: 'never runs', agent: 'claude' });
      const waited = await call(client, 'task_wait', { task: started.task_id, timeout_seconds: 60 });
      expect(waited.state).toBe('failed');
      const info = readRunInfo(join(root, P, started.task_id, 'runs', started.run_id, 'run-info.yaml'));
      expect(info).toMatchObject({ status: 'failed', run_id: started.run_id, agent: 'claude' });
      expect(info.error_summary).toContain('broken-config.yaml');
    } finally {
      await client.close();
    }
  });

  it('`job --run-id` (how task_start starts it) refuses a run id that already holds a run, and an invalid one, with exit 2', () => {
    const root = join(dir, 'runs-id');
    const T = 'task-20260101-120000-runid';
    const RUN = '20260101-1200000000-7-1';
    writeRun(root, P, T, RUN, { status: 'completed', exit_code: 0 });
    const env = envWithFakeAgents(cleanEnv(dir) as Record<string, string>);
    const taken = runCli(['job', '--root', root, '--project', P, '--task', T, '--agent', 'claude', '--prompt', 'x', '--run-id', RUN], { env, cwd: dir });
    expect(taken.stderr).toBe(`Error: run ${RUN} already exists\n`);
    expect(taken.code).toBe(2);
    const bad = runCli(['job', '--root', root, '--project', P, '--task', T, '--agent', 'claude', '--prompt', 'x', '--run-id', '../x'], { env, cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^Error: invalid run ID/);
  });
});
