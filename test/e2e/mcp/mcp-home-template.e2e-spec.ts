/**
 * Upstream writes an agent-less template to ~/.run-agent/conductor-loop.hcl on almost any command.
 * `run-agent mcp` started without a config (an agent run with `--agent` and no config) must still
 * serve its tools; an explicitly named config is validated as `job` validates it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { cleanEnv, requireBuild, runAgentBin, runCli } from '../cli/bus-helpers';
import { call } from './mcp-scenario';

const P = 'mcp-proj';
const T = 'task-20260101-120000-home';
const TEMPLATE = ['# personal configuration (every agent commented out)', '# claude {', '#   token_file = "~/.anthropic"', '# }', ''].join('\n');

describe('run-agent mcp with an agent-less config template in the home folder', () => {
  let dir: string;
  let root: string;
  let env: Record<string, string>;

  beforeAll(() => {
    requireBuild();
    dir = mkdtempSync(join(tmpdir(), 'mcp-home-'));
    root = join(dir, 'runs');
    mkdirSync(join(root, P, T), { recursive: true });
    mkdirSync(join(dir, '.run-agent'));
    writeFileSync(join(dir, '.run-agent', 'conductor-loop.hcl'), TEMPLATE);
    env = cleanEnv(dir) as Record<string, string>;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('serves the bus tools: the discovered template counts as no config', async () => {
    const client = new Client({ name: 'mcp-home-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: runAgentBin, args: ['mcp', '--root', root, '--project', P, '--task', T], env, stderr: 'pipe', cwd: dir }));
    try {
      const posted = await call(client, 'bus_post', { type: 'FACT', body: 'served although the home config has no agents' });
      const read = await call(client, 'bus_read', {});
      expect(read.messages.map((m: { msg_id: string }) => m.msg_id)).toEqual([posted.msg_id]);
    } finally {
      await client.close();
    }
  });

  it('the same template named with --config is refused in one line, as `job` refuses it', () => {
    const res = runCli(['mcp', '--root', root, '--project', P, '--config', join(dir, '.run-agent', 'conductor-loop.hcl')], { env, cwd: dir, input: '' });
    expect(res.code).not.toBe(0);
    expect(res.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^Error: \/.*conductor-loop\.hcl: agents: no agents configured$/)]);
  });
});
