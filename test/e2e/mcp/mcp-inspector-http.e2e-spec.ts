/**
 * The official MCP Inspector in CLI mode against the server's `/mcp` (Streamable HTTP, bearer key
 * passed explicitly): lists the tools, calls a read-only tool, reads a resource.
 */
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { listenApiApp, TestApi } from '../../utils/api-app';
import { TOOL_NAMES } from './mcp-scenario';

const INSPECTOR = join(__dirname, '..', '..', '..', 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');
const KEY = 'inspector-test-key';
const P = 'insp-http';
const T = 'task-20260101-120000-insphttp';

describe('MCP Inspector CLI against /mcp (HTTP)', () => {
  let api: TestApi & { base: string };

  beforeAll(async () => {
    api = await listenApiApp({ apiKey: KEY });
    mkdirSync(join(api.root, P, T), { recursive: true });
  });
  afterAll(async () => api?.close());

  const inspect = (args: string[]) =>
    new Promise<any>((resolve, reject) => {
      const argv = [INSPECTOR, '--cli', `${api.base}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${KEY}`, ...args];
      execFile(process.execPath, argv, { env: { ...process.env, HOME: api.root }, timeout: 60_000 }, (err, stdout, stderr) => {
        if (err) return reject(new Error(`inspector ${args.join(' ')}: ${stderr || err.message}`));
        resolve(JSON.parse(stdout));
      });
    });

  it('lists the tools, calls list_tasks and reads a task bus', async () => {
    const { tools } = await inspect(['--method', 'tools/list']);
    expect(tools.map((t: { name: string }) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    const res = await inspect(['--method', 'tools/call', '--tool-name', 'list_tasks', '--tool-arg', `project=${P}`]);
    expect(res.structuredContent).toEqual({ project_id: P, tasks: [{ task_id: T, state: 'pending', runs: 0, latest_run: '' }], has_more: false });
    const read = await inspect(['--method', 'resources/read', '--uri', `conductor://bus/${P}/${T}`]);
    expect(JSON.parse(read.contents[0].text)).toEqual({ messages: [] });
  });
});
