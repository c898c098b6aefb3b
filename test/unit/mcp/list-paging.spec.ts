import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createConductorMcp, type ConductorMcp, type SubTaskStarter } from '@app/mcp';
import { createBusWriters } from '@app/messagebus';
import { createChangeFeed, createStorageIndex } from '@app/storage';
import { writeRun } from '../../utils/run-fixtures';

const noStarter: SubTaskStarter = {
  start: () => Promise.reject(new Error('not in this test')),
  isActive: () => false,
  failure: () => undefined,
};

type Page = Record<string, unknown> & { has_more: boolean; next_cursor?: string };

/** Issue #29: the listing tools page as the API does (default, maximum, cursor; bad values refused). */
describe('MCP list_projects, list_tasks and usage are paged', () => {
  let root: string;
  let mcp: ConductorMcp;
  let client: Client;
  const P = 'proj';
  const task = (i: number) => `task-20260101-120000-t${String(i).padStart(2, '0')}`;

  const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> => (await client.callTool({ name, arguments: args })) as CallToolResult;
  const page = async (name: string, args: Record<string, unknown>): Promise<Page> => {
    const res = await call(name, args);
    expect([name, res.isError ?? false]).toEqual([name, false]);
    return res.structuredContent as Page;
  };
  /** Follows next_cursor with `limit`; the items of `pick` in order, every page at most `limit`. */
  const walk = async (name: string, args: Record<string, unknown>, limit: number, pick: (p: Page) => string[]) => {
    const items: string[] = [];
    for (let after: string | undefined; ; ) {
      const p = await page(name, { ...args, limit, ...(after ? { after } : {}) });
      const got = pick(p);
      expect(got.length).toBeLessThanOrEqual(limit);
      items.push(...got);
      if (!p.has_more) return items;
      after = p.next_cursor;
    }
  };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'mcp-paging-'));
    for (let i = 0; i < 11; i++) mkdirSync(join(root, `other-${i}`));
    for (let i = 0; i < 23; i++) writeRun(root, P, task(i), `20260101-1200000000-${100 + i}-1`, { agent: ['claude', 'codex'][i % 2], usage: { input_tokens: i, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0 } });
    mcp = createConductorMcp({ scope: { root }, starter: noStarter, index: createStorageIndex(root), feed: createChangeFeed(), writers: createBusWriters() });
    const [a, b] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: 'paging-test', version: '1' });
    await Promise.all([mcp.server.connect(a), client.connect(b)]);
  });
  afterAll(async () => {
    await client.close();
    await mcp.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('list_projects and list_tasks: one page of `limit`, every item once through after: next_cursor', async () => {
    const projects = (await page('list_projects', {})).projects as string[];
    expect(projects).toEqual([...Array.from({ length: 11 }, (_, i) => `other-${i}`), P].sort());
    expect(await walk('list_projects', {}, 5, (p) => p.projects as string[])).toEqual(projects);
    const tasks = Array.from({ length: 23 }, (_, i) => task(i));
    expect(await walk('list_tasks', { project: P }, 4, (p) => (p.tasks as { task_id: string }[]).map((t) => t.task_id))).toEqual(tasks);
    expect(await page('list_tasks', { project: P, limit: 2 })).toMatchObject({ has_more: true, next_cursor: task(1) });
  });

  it('usage: totals of every run on each page, the rows (agents, projects, tasks) paged as one list', async () => {
    const first = await page('usage', { project: P, limit: 3 });
    expect([first.runs, first.total_tokens, first.by_agent, first.by_project, first.by_task, first.next_cursor]).toEqual([23, 253 + 23, expect.any(Array), [expect.objectContaining({ key: P })], [], `project:${P}`]);
    const rows = await walk('usage', { project: P }, 7, (p) => ['by_agent', 'by_project', 'by_task'].flatMap((l) => (p[l] as { key: string }[]).map((r) => `${l}:${r.key}`)));
    expect(rows).toEqual(['by_agent:claude', 'by_agent:codex', `by_project:${P}`, ...Array.from({ length: 23 }, (_, i) => `by_task:${P}/${task(i)}`)]);
  });

  it('a bad limit or after is a tool error with the API one line', async () => {
    for (const [name, args] of [
      ['list_projects', { limit: 0 }],
      ['list_tasks', { project: P, limit: 1.5 }],
      ['usage', { project: P, limit: -1 }],
    ] as const) {
      const res = await call(name, args);
      expect([name, res.isError, (res.content[0] as { text: string }).text]).toEqual([name, true, 'invalid limit: must be a positive integer (at most 5000 are returned)']);
    }
    for (const [name, args] of [
      ['list_projects', { after: '../x' }],
      ['list_tasks', { project: P, after: 'a/b' }],
      ['usage', { project: P, after: 'claude' }],
    ] as const) {
      const res = await call(name, args);
      expect([name, res.isError, (res.content[0] as { text: string }).text]).toEqual([name, true, 'invalid after: pass the next_cursor of the previous page']);
    }
  });
});
