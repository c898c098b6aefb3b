import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_AGENT_ARGS, setupAgentMcp } from '@app/agents';
import { parseResourceUri } from '@app/mcp';

describe('setupAgentMcp (runner opt-in mcp: true)', () => {
  let dir: string;
  const launch = { runAgentPath: '/opt/cl/bin/run-agent', root: '/r', projectId: 'p', taskId: 'task-20260101-120000-x', runId: '20260101-1200000000-1-1' };
  const serverArgs = ['mcp', '--root', '/r', '--project', 'p', '--task', 'task-20260101-120000-x', '--run', '20260101-1200000000-1-1'];
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'mcp-cfg-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('gemini: a settings file named by GEMINI_CLI_SYSTEM_SETTINGS_PATH, flags unchanged', () => {
    const s = setupAgentMcp('gemini', CLI_AGENT_ARGS.gemini, dir, launch)!;
    expect(s.args).toEqual(CLI_AGENT_ARGS.gemini);
    expect(s.env).toEqual({ GEMINI_CLI_SYSTEM_SETTINGS_PATH: join(dir, 'gemini-settings.json') });
    expect(JSON.parse(readFileSync(s.file, 'utf8'))).toEqual({ mcpServers: { conductor: { command: launch.runAgentPath, args: serverArgs } } });
  });

  it('codex: -c overrides before the stdin marker, and the same settings as TOML in the run folder', () => {
    const s = setupAgentMcp('codex', CLI_AGENT_ARGS.codex, dir, launch)!;
    const args = `[${serverArgs.map((a) => JSON.stringify(a)).join(', ')}]`;
    expect(s.args).toEqual(['exec', '--dangerously-bypass-approvals-and-sandbox', '--json', '-c', 'mcp_servers.conductor.command="/opt/cl/bin/run-agent"', '-c', `mcp_servers.conductor.args=${args}`, '-']);
    expect(readFileSync(join(dir, 'codex-mcp.toml'), 'utf8')).toBe(`[mcp_servers.conductor]\ncommand = "/opt/cl/bin/run-agent"\nargs = ${args}\n`);
  });

  it('agents without MCP support are left alone', () => {
    expect(setupAgentMcp('command', ['x'], dir, launch)).toBeUndefined();
  });
});

describe('MCP resource URIs', () => {
  it('parses bus and output URIs and validates their ids', () => {
    expect(parseResourceUri('conductor://bus/p')).toEqual({ kind: 'bus', projectId: 'p' });
    expect(parseResourceUri('conductor://bus/p/task-20260101-120000-xyz')).toEqual({ kind: 'bus', projectId: 'p', taskId: 'task-20260101-120000-xyz' });
    expect(parseResourceUri('conductor://runs/p/task-20260101-120000-xyz/20260101-1200000000-1-1/output')).toEqual({
      kind: 'output',
      projectId: 'p',
      taskId: 'task-20260101-120000-xyz',
      runId: '20260101-1200000000-1-1',
    });
    expect(() => parseResourceUri('conductor://bus/..')).toThrow();
    expect(parseResourceUri('conductor://runs/p/t/r/stdout')).toBeUndefined();
    expect(parseResourceUri('file:///etc/passwd')).toBeUndefined();
  });
});
