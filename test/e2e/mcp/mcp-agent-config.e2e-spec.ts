import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { runJob } from '@app/runner';
import { loadConfig, RunsLayout } from '@app/storage';
import { requireBuild, runAgentBin } from '../cli/bus-helpers';
import { agentEnv, PROJECT, readJson, taskId, tempRoot } from '../runner/helpers';
import { TOOL_NAMES } from './mcp-scenario';
import { loopParts } from '../../utils/loop-parts';

const CLAUDE_FLAGS = ['-p', '--input-format', 'text', '--output-format', 'stream-json', '--verbose', '--tools', 'default', '--permission-mode', 'bypassPermissions'];

describe('agents with mcp: true get our MCP server in their CLI configuration', () => {
  const tmp = tempRoot();
  afterAll(() => tmp.cleanup());

  function config(mcp: boolean) {
    const path = join(dirname(tmp.root), `config-${mcp}.yaml`);
    writeFileSync(path, ['agents:', '  claude:', '    type: claude', `    mcp: ${mcp}`, ''].join('\n'));
    return loadConfig(path);
  }

  async function runClaude(mcp: boolean) {
    const task = taskId(`mcp-${mcp}`);
    const dump = join(tmp.root, `dump-${mcp}.json`);
    const result = await runJob({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'hi', agent: 'claude', config: config(mcp), env: agentEnv({ FAKE_AGENT_ENV_DUMP: dump }) });
    expect(result.error).toBeUndefined();
    expect(result.ok).toBe(true);
    return { task, result, argv: readJson<{ argv: string[] }>(dump).argv };
  }

  it('a fake claude run receives --mcp-config naming `run-agent mcp` scoped to the run, and that server answers', async () => {
    requireBuild();
    const { task, result, argv } = await runClaude(true);
    const file = join(result.runDir, 'mcp-config.json');
    expect(argv).toEqual([...CLAUDE_FLAGS, '--mcp-config', file]);
    expect(result.info!.commandline).toContain(`--mcp-config ${file}`);
    const server = JSON.parse(readFileSync(file, 'utf8')).mcpServers.conductor;
    expect(server).toEqual({
      type: 'stdio',
      command: runAgentBin,
      args: ['mcp', '--root', new RunsLayout(tmp.root).root, '--project', PROJECT, '--task', task, '--run', result.runId],
    });

    // the configured command is a working MCP server for that task
    const client = new Client({ name: 'agent-config-test', version: '1' });
    await client.connect(new StdioClientTransport({ command: server.command, args: server.args, env: agentEnv(), stderr: 'pipe' }));
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
      const read = await client.callTool({ name: 'bus_read', arguments: {} });
      const messages = JSON.parse((read.content as { text: string }[])[0].text).messages as { type: string; task_id: string }[];
      expect(messages.map((m) => [m.type, m.task_id])).toEqual([
        ['RUN_START', task],
        ['RUN_STOP', task],
      ]);
    } finally {
      await client.close();
    }
  });

  it('without mcp: true the argv is the plain upstream one', async () => {
    const { argv } = await runClaude(false);
    expect(argv).toEqual(CLAUDE_FLAGS);
  });
});
