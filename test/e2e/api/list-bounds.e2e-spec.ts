import * as fs from 'node:fs';
import * as path from 'node:path';
import { createApiApp, TestApi } from '../../utils/api-app';
import { writeLargeBus } from '../../utils/hostile-root';
import { askQuestion } from '@app/runner';
import { createBusWriters } from '@app/messagebus';
import { RunsLayout } from '@app/storage';
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

type Page = Record<string, unknown> & { has_more: boolean; next_cursor?: string };

/** Issue #29: the remaining list routes (projects, runs/flat, usage, questions) page the same way; home-dirs is capped. */
describe('every list route is bounded: default page, maximum, cursor', () => {
  let api: TestApi;
  const F = 'flat';
  const Q = 'asks';
  const RUNS = 1005;
  const PROJECTS = 1003;
  const QUESTIONS = 1004;
  const taskOf = (i: number) => `task-20260101-120000-t${String(i).padStart(4, '0')}`;
  const get = async (url: string): Promise<Page> => {
    const res = await api.app.inject({ method: 'GET', url });
    expect([url, res.statusCode]).toEqual([url, 200]);
    return res.json();
  };
  const keysOf = (body: Page, list: string, key: string) => (body[list] as Record<string, string>[]).map((x) => x[key]);
  /** Follows next_cursor from `url` (limit `limit`) to the end: every page at most `limit`, the items in order. */
  const walk = async (url: string, lists: string[], key: string, limit: number) => {
    const items: string[] = [];
    let pages = 0;
    for (let after: string | undefined; ; pages++) {
      const sep = url.includes('?') ? '&' : '?';
      const page = await get(`${url}${sep}limit=${limit}${after ? `&after=${encodeURIComponent(after)}` : ''}`);
      const got = lists.flatMap((l) => keysOf(page, l, key).map((k) => `${l}:${k}`));
      expect(got.length).toBeLessThanOrEqual(limit);
      items.push(...got);
      if (!page.has_more) {
        expect(page.next_cursor).toBeUndefined();
        return { items, pages: pages + 1 };
      }
      expect(got.length).toBe(limit);
      after = page.next_cursor;
    }
  };

  beforeAll(async () => {
    api = await createApiApp({ disableTaskStart: true });
    const base = Date.parse('2026-01-01T12:00:00Z');
    for (let i = 0; i < PROJECTS; i++) {
      const dir = path.join(api.root, `p${String(i).padStart(4, '0')}`);
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, 'PROJECT-ROOT.txt'), '/tmp\n');
      const t = new Date(base + (i % 40) * 1000); // ties: 40 distinct times
      fs.utimesSync(path.join(dir, 'PROJECT-ROOT.txt'), t, t);
    }
    for (let i = 0; i < RUNS; i++) {
      seedRun(api.root, F, taskOf(i), `20260101-1200000000-${String(5000 + i)}-1`, {
        agent: ['claude', 'codex', 'gemini'][i % 3],
        start_time: new Date(base + (i % 7) * 60_000), // ties: 7 distinct start times
        cwd: `/tmp/home-${i}`,
        usage: { input_tokens: i, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0 },
      });
    }
    const layout = new RunsLayout(api.root);
    for (let i = 0; i < QUESTIONS; i++) {
      const t = taskOf(i % 8);
      const last = i >= QUESTIONS - 8; // the index file once per task, after its last question
      await askQuestion({ busPath: layout.taskBus(Q, t), taskDir: last ? layout.taskDir(Q, t) : undefined, projectId: Q, taskId: t, body: `question ${i}`, writers: createBusWriters() });
    }
  }, 180_000); // ~3,000 files and 1,000 bus appends: seconds alone, longer on a loaded machine
  afterAll(async () => api.close());

  it('GET /api/projects: newest activity first, 1000 by default, every project once through after=next_cursor', async () => {
    const first = await get('/api/projects');
    expect([keysOf(first, 'projects', 'id').length, first.has_more, typeof first.next_cursor]).toEqual([1000, true, 'string']);
    const all = keysOf(await get('/api/projects?limit=999999'), 'projects', 'id');
    const expected = Array.from({ length: PROJECTS }, (_, i) => ({ id: `p${String(i).padStart(4, '0')}`, t: i % 40 }))
      .sort((a, b) => b.t - a.t || (a.id < b.id ? -1 : 1))
      .map((p) => p.id);
    // `flat` (newer runs) first; `asks` has neither runs nor a marker: not a project
    expect(all).toEqual([F, ...expected]);
    expect(all).toHaveLength(new Set(all).size);
    const rest = await get(`/api/projects?after=${encodeURIComponent(first.next_cursor!)}`);
    expect([...keysOf(first, 'projects', 'id'), ...keysOf(rest, 'projects', 'id')]).toEqual(all);
    const walked = await walk('/api/projects', ['projects'], 'id', 250);
    expect(walked.items).toEqual(all.map((id) => `projects:${id}`));
  });

  it('GET /api/projects/{p}/runs/flat: start order, 1000 by default, every run once; active_only pages too', async () => {
    const first = await get(`/api/projects/${F}/runs/flat`);
    expect([keysOf(first, 'runs', 'id').length, first.has_more]).toEqual([1000, true]);
    const all = keysOf(await get(`/api/projects/${F}/runs/flat?limit=5000`), 'runs', 'id');
    expect(all).toHaveLength(RUNS);
    const ids = Array.from({ length: RUNS }, (_, i) => ({ id: `20260101-1200000000-${String(5000 + i)}-1`, t: i % 7 }));
    expect(all).toEqual(ids.sort((a, b) => a.t - b.t || (a.id < b.id ? -1 : 1)).map((r) => r.id));
    const walked = await walk(`/api/projects/${F}/runs/flat`, ['runs'], 'id', 150);
    expect(walked.items).toEqual(all.map((id) => `runs:${id}`));
    const idle = await walk(`/api/projects/${F}/runs/flat?active_only=1`, ['runs'], 'id', 100);
    expect(idle.items).toHaveLength(RUNS); // an idle project: the latest run of every task
  });

  it('GET usage: totals cover every run on each page; by_agent, by_project, by_task rows page as one list', async () => {
    const sum = (RUNS * (RUNS - 1)) / 2 + RUNS;
    for (const url of ['/api/v1/usage', `/api/v1/usage?project_id=${F}`, `/api/projects/${F}/usage`]) {
      const first = await get(url);
      expect([first.runs, first.total_tokens, first.has_more]).toEqual([RUNS, sum, true]);
      expect(keysOf(first, 'by_agent', 'key').length + keysOf(first, 'by_project', 'key').length + keysOf(first, 'by_task', 'key').length).toBe(1000);
      const walked = await walk(url, ['by_agent', 'by_project', 'by_task'], 'key', 200);
      const rows = ['by_agent:claude', 'by_agent:codex', 'by_agent:gemini', `by_project:${F}`, ...Array.from({ length: RUNS }, (_, i) => `by_task:${F}/${taskOf(i)}`)];
      expect(walked.items).toEqual(rows);
    }
    const task = await get(`/api/projects/${F}/tasks/${taskOf(4)}/usage?limit=2`);
    expect([keysOf(task, 'by_agent', 'key'), keysOf(task, 'by_project', 'key'), task.has_more, task.next_cursor]).toEqual([['codex'], [F], true, `project:${F}`]);
  });

  it('GET /api/v1/questions: by project, task and msg_id, 1000 by default, every question once', async () => {
    const first = await get('/api/v1/questions');
    expect([keysOf(first, 'questions', 'msg_id').length, first.has_more]).toEqual([1000, true]);
    const walked = await walk(`/api/v1/questions?project_id=${Q}`, ['questions'], 'body', 300);
    expect(walked.items).toHaveLength(QUESTIONS);
    expect(new Set(walked.items).size).toBe(QUESTIONS);
    const all = (await get('/api/v1/questions?limit=5000')).questions as { task_id: string; msg_id: string; body: string }[];
    expect(walked.items).toEqual(all.map((q) => `questions:${q.body}`));
    const keys = all.map((q) => `${q.task_id}/${q.msg_id}`);
    expect(keys).toEqual([...keys].sort());
  });

  it('GET /api/projects/home-dirs stays capped at 20 (upstream #23)', async () => {
    const dirs = (await get('/api/projects/home-dirs')).dirs as string[];
    expect(dirs).toHaveLength(20);
  });

  it('a bad limit or cursor answers 400 with one line on every paged list', async () => {
    const routes: [string, string][] = [
      ['/api/projects', 'p0001'],
      [`/api/projects/${F}/runs/flat`, '20260101-1200000000-5000-1'],
      ['/api/v1/usage', 'agents:claude'],
      [`/api/projects/${F}/usage`, 'claude'],
      [`/api/projects/${F}/tasks/${taskOf(0)}/usage`, ''],
      ['/api/v1/questions', `${Q}/${taskOf(0)}`],
      ['/api/v1/runs', 'run*'],
      ['/api/v1/tasks', 'no-slash'],
    ];
    for (const [url, badCursor] of routes) {
      const bad = ['limit=0', 'limit=-1', 'limit=abc', 'limit=1.5', 'limit=1e3', 'after=%01', 'after=a%0Ab', `after=${'x'.repeat(2000)}`];
      if (badCursor) bad.push(`after=${encodeURIComponent(badCursor)}`);
      for (const query of bad) {
        const res = await api.app.inject({ method: 'GET', url: `${url}?${query}` });
        const message = res.statusCode === 400 ? (res.json().error.message as string) : '';
        expect([url, query, res.statusCode, message.includes('\n')]).toEqual([url, query, 400, false]);
        expect(message).toMatch(/^invalid (limit|after): /);
      }
      expect([url, (await api.app.inject({ method: 'GET', url: `${url}?limit=&after=` })).statusCode]).toEqual([url, 200]);
    }
  });
});
