import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createConductorMcp, type ConductorMcp, type SubTaskStarter } from '@app/mcp';
import { createBusWriters } from '@app/messagebus';
import { createChangeFeed, createStorageIndex } from '@app/storage';

const READ_ONLY = ['bus_read', 'list_projects', 'list_tasks', 'task_status', 'task_wait', 'usage'];

const noStarter: SubTaskStarter = {
  start: () => Promise.reject(new Error('not in this test')),
  isActive: () => false,
  failure: () => undefined,
};

describe('MCP tools: annotations, output schemas, bus_post on a new project', () => {
  let root: string;
  let mcp: ConductorMcp;
  let client: Client;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'mcp-annot-'));
    mcp = createConductorMcp({ scope: { root }, starter: noStarter, index: createStorageIndex(root), feed: createChangeFeed(), writers: createBusWriters() });
    const [a, b] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: 'annot-test', version: '1' });
    await Promise.all([mcp.server.connect(a), client.connect(b)]);
  });
  afterEach(async () => {
    await client.close();
    await mcp.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('every tool has a title, annotations and an output schema; the read-only ones are exactly the listing/reading tools', async () => {
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThanOrEqual(10);
    for (const t of tools) {
      expect(t.annotations?.title).toEqual(expect.any(String));
      expect(typeof t.annotations?.readOnlyHint).toBe('boolean');
      expect(t.outputSchema?.type).toBe('object');
      if (!t.annotations?.readOnlyHint) expect(typeof t.annotations?.destructiveHint).toBe('boolean');
    }
    expect(tools.filter((t) => t.annotations?.readOnlyHint).map((t) => t.name).sort()).toEqual(READ_ONLY);
    expect(tools.find((t) => t.name === 'task_stop')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });

  it('bus_post creates the folder of a project that does not exist yet (as `run-agent bus post --project`), with structuredContent', async () => {
    const res = (await client.callTool({ name: 'bus_post', arguments: { project: 'brand-new', type: 'FACT', body: 'first message' } })) as CallToolResult;
    expect(res.isError).toBeFalsy();
    const posted = res.structuredContent as { msg_id: string; bus: string };
    expect(JSON.parse((res.content[0] as { text: string }).text)).toEqual(posted);
    expect(posted.bus).toBe(join(root, 'brand-new', 'PROJECT-MESSAGE-BUS.md'));
    expect(readFileSync(posted.bus, 'utf8')).toContain(`msg_id: ${posted.msg_id}`);
    const listed = (await client.callTool({ name: 'list_projects', arguments: {} })) as CallToolResult;
    expect(listed.structuredContent).toEqual({ projects: ['brand-new'], has_more: false });
  });

  it('a refused bus_post on a new project leaves no folder behind', async () => {
    const res = (await client.callTool({ name: 'bus_post', arguments: { project: 'refused', type: 'FACT', body: 'x'.repeat(16 * 1024 * 1024 + 1) } })) as CallToolResult;
    expect(res.isError).toBe(true);
    expect(existsSync(join(root, 'refused'))).toBe(false);
  });
});
