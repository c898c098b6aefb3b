import * as fs from 'node:fs';
import * as path from 'node:path';
import { createApiApp, TestApi } from '../../utils/api-app';
import { writeLargeBus } from '../../utils/hostile-root';
import { seedRun } from '../../utils/run-fixtures';

const P = 'paged';
const COUNT = 6200;

/** Issue #29 finding 5: list routes are bounded by default (one page, a maximum) with a cursor to the next page. */
describe('list routes answer one page by default, with a cursor', () => {
  let api: TestApi;
  const get = async (url: string) => {
    const res = await api.app.inject({ method: 'GET', url });
    expect([url, res.statusCode]).toEqual([url, 200]);
    return res.json() as { messages: { msg_id: string; body: string }[]; has_more: boolean; next_cursor?: string };
  };
  beforeAll(async () => {
    api = await createApiApp({ disableTaskStart: true });
    fs.mkdirSync(path.join(api.root, P));
    writeLargeBus(path.join(api.root, P, 'PROJECT-MESSAGE-BUS.md'), COUNT, P);
  });
  afterAll(async () => api.close());

  it('GET /api/projects/{p}/messages without limit: the newest 5000, then older pages through before=', async () => {
    const first = await get(`/api/projects/${P}/messages`);
    expect(first.messages).toHaveLength(5000);
    expect(first.messages[4999].body).toBe(`message ${COUNT - 1} ${'x'.repeat(60)}`);
    expect(first.has_more).toBe(true);
    expect(first.next_cursor).toBe(first.messages[0].msg_id);
    const older = await get(`/api/projects/${P}/messages?before=${first.next_cursor}`);
    expect(older.messages).toHaveLength(COUNT - 5000);
    expect(older.has_more).toBe(false);
    expect(older.next_cursor).toBeUndefined();
    expect(older.messages[0].body).toMatch(/^message 0 /);
    // an explicit limit keeps upstream's rule: the newest `limit`
    const two = await get(`/api/projects/${P}/messages?limit=2`);
    expect(two.messages.map((m) => m.body.split(' ')[1])).toEqual([String(COUNT - 2), String(COUNT - 1)]);
  });

  it('GET /api/v1/messages without after: the oldest 5000, then the rest through after=next_cursor', async () => {
    const first = await get(`/api/v1/messages?project_id=${P}`);
    expect(first.messages).toHaveLength(5000);
    expect(first.messages[0].body).toMatch(/^message 0 /);
    expect(first.has_more).toBe(true);
    const rest = await get(`/api/v1/messages?project_id=${P}&after=${first.next_cursor}`);
    expect(rest.messages).toHaveLength(COUNT - 5000);
    expect(rest.messages[0].body).toMatch(/^message 5000 /);
    expect(rest.has_more).toBe(false);
    const unknown = await api.app.inject({ method: 'GET', url: `/api/v1/messages?project_id=${P}&after=MSG-nope` });
    expect([unknown.statusCode, unknown.json().error.message]).toEqual([404, 'message id not found']);
  });

  it('GET /api/v1/runs and /api/v1/tasks answer one page (default 1000, at most 5000) with next_cursor → after=', async () => {
    const runIds: string[] = [];
    for (let i = 0; i < 1005; i++) {
      const task = `task-20260101-120000-t${String(i % 3)}aa`;
      const runId = `20260101-1200000000-${String(1000 + i)}-1`;
      if (i < 3) fs.writeFileSync(path.join(seedRun(api.root, P, task, runId), '..', '..', 'TASK.md'), 'x\n');
      else seedRun(api.root, P, task, runId);
      runIds.push(runId);
    }
    const first = await api.app.inject({ method: 'GET', url: '/api/v1/runs' });
    const body = first.json();
    expect([body.runs.length, body.has_more, body.next_cursor]).toEqual([1000, true, runIds[999]]);
    const rest = (await api.app.inject({ method: 'GET', url: `/api/v1/runs?after=${body.next_cursor}` })).json();
    expect([rest.runs.map((r: { run_id: string }) => r.run_id), rest.has_more]).toEqual([runIds.slice(1000), false]);
    const capped = (await api.app.inject({ method: 'GET', url: '/api/v1/runs?limit=999999' })).json();
    expect(capped.runs.length).toBe(1005);
    const tasks = (await api.app.inject({ method: 'GET', url: '/api/v1/tasks?limit=2' })).json();
    expect([tasks.tasks.map((t: { task_id: string }) => t.task_id), tasks.has_more, tasks.next_cursor]).toEqual([
      ['task-20260101-120000-t0aa', 'task-20260101-120000-t1aa'],
      true,
      `${P}/task-20260101-120000-t1aa`,
    ]);
    const last = (await api.app.inject({ method: 'GET', url: `/api/v1/tasks?limit=2&after=${encodeURIComponent(tasks.next_cursor)}` })).json();
    expect([last.tasks.map((t: { task_id: string }) => t.task_id), last.has_more]).toEqual([['task-20260101-120000-t2aa'], false]);
  });
});
