/**
 * A third-party client: the official MCP Inspector in CLI mode (`mcp-inspector --cli`, a pinned
 * devDependency) against `run-agent mcp` over stdio — lists the tools, calls a read-only tool and
 * reads a resource.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, requireBuild, runAgentBin } from '../cli/bus-helpers';
import { TOOL_NAMES } from './mcp-scenario';

const INSPECTOR = join(__dirname, '..', '..', '..', 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');
const P = 'insp-proj';
const T = 'task-20260101-120000-insp';

describe('MCP Inspector CLI against run-agent mcp (stdio)', () => {
  let dir: string;
  let root: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    requireBuild();
    dir = mkdtempSync(join(tmpdir(), 'mcp-insp-'));
    root = join(dir, 'runs');
    mkdirSync(join(root, P, T), { recursive: true });
    env = { ...cleanEnv(dir), HOME: dir };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const inspect = (args: string[]) =>
    new Promise<any>((resolve, reject) => {
      execFile(process.execPath, [INSPECTOR, '--cli', runAgentBin, 'mcp', '--root', root, '--project', P, ...args], { env, cwd: dir, timeout: 60_000 }, (err, stdout, stderr) => {
        if (err) return reject(new Error(`inspector ${args.join(' ')}: ${stderr || err.message}`));
        resolve(JSON.parse(stdout));
      });
    });

  it('lists the tools with their annotations', async () => {
    const { tools } = await inspect(['--method', 'tools/list']);
    expect(tools.map((t: { name: string }) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    expect(tools.find((t: { name: string }) => t.name === 'list_tasks').annotations).toMatchObject({ readOnlyHint: true });
  });

  it('calls a read-only tool and reads a resource', async () => {
    const res = await inspect(['--method', 'tools/call', '--tool-name', 'list_tasks']);
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toEqual({ project_id: P, tasks: [{ task_id: T, state: 'pending', runs: 0, latest_run: '' }], has_more: false });
    const read = await inspect(['--method', 'resources/read', '--uri', `conductor://bus/${P}/${T}`]);
    expect(JSON.parse(read.contents[0].text)).toEqual({ messages: [] });
  });
});
