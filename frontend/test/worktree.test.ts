import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, ApiError } from '../src/api/client';
import { fetchTaskDiff, fetchWorktree, mergeState, mergeTask } from '../src/api/worktree';

// A real HTTP server on 127.0.0.1 answering like the conductor's worktree routes.
let server: Server;
let client: ApiClient;
const seen: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/api/projects/p/tasks/t1/diff') json(200, { task_id: 't1', branch: 'conductor/t1', base_commit: 'abc', files: [{ path: 'a.txt', status: 'modified', additions: 1, deletions: 0, binary: false, hunks: [] }] });
    else if (req.url === '/api/projects/p/tasks/t2/diff') json(404, { error: { code: 'NOT_FOUND', message: 'task has no worktree' } });
    else if (req.url === '/api/projects/p/tasks/t1?include_files=0') json(200, { id: 't1', worktree: { path: '/r/.conductor/worktrees/t1', branch: 'conductor/t1', base_commit: 'abc', merge_status: 'conflict', merge_files: ['a.txt'] } });
    else if (req.url === '/api/projects/p/tasks/t2?include_files=0') json(200, { id: 't2' });
    else if (req.method === 'POST' && req.url === '/api/projects/p/tasks/t1/merge') json(409, { error: { code: 'CONFLICT', message: 'merge of conductor/t1 into main conflicts (a.txt)' } });
    else json(500, { error: { message: 'unexpected' } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = new ApiClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, undefined);
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('worktree API client', () => {
  it('fetches a diff, and null for a task without a worktree', async () => {
    expect((await fetchTaskDiff('p', 't1', client))?.files.map((f) => f.path)).toEqual(['a.txt']);
    expect(await fetchTaskDiff('p', 't2', client)).toBeNull();
  });

  it('reads the worktree of a task and its merge state', async () => {
    const w = await fetchWorktree('p', 't1', client);
    expect(w && mergeState(w)).toEqual({ label: 'merge conflict', tone: 'error' });
    expect(await fetchWorktree('p', 't2', client)).toBeNull();
    expect(mergeState({ path: '', branch: 'b', base_commit: 'c' })).toEqual({ label: 'unmerged', tone: 'idle' });
    expect(mergeState({ path: '', branch: 'b', base_commit: 'c', merge_status: 'merged' }).tone).toBe('ok');
    expect(mergeState({ path: '', branch: 'b', base_commit: 'c', merge_status: 'failed' }).label).toBe('merge failed');
  });

  it('posts the merge and surfaces a conflict as an error with the reason', async () => {
    const err = await mergeTask('p', 't1', client).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(409);
    expect((err as ApiError).message).toBe('merge of conductor/t1 into main conflicts (a.txt)');
    expect(seen).toContain('POST /api/projects/p/tasks/t1/merge');
  });
});
