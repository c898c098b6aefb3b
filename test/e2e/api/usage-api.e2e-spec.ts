import * as fs from 'node:fs';
import * as path from 'node:path';
import { listenApiApp, TestApi } from '../../utils/api-app';
import { seedRun } from '../../utils/run-fixtures';

const P = 'u';
const ROOT_TASK = 'task-20260101-120000-root';
const CHILD_TASK = 'task-20260101-120000-child';
const usage = (i: number, o: number, cost?: number) => ({ input_tokens: i, output_tokens: o, cache_read_tokens: 1, cache_write_tokens: 0, ...(cost !== undefined ? { cost_usd: cost } : {}) });

const body = async (res: Response | Promise<Response>): Promise<any> => (await res).json();

describe('usage API, pause/unpause, budget fields, usage metrics (#18)', () => {
  let api: TestApi & { base: string };
  const req = (method: string, url: string, body?: object) =>
    fetch(`${api.base}${url}`, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });

  beforeAll(async () => {
    api = await listenApiApp({ disableTaskStart: true });
  });
  afterAll(async () => api.close());

  it('GET …/tasks/:t/usage sums the task and its tree; /projects/:p/usage and /v1/usage the project', async () => {
    seedRun(api.root, P, ROOT_TASK, '20260101-1200000000-1-1', { agent: 'claude', usage: usage(100, 10, 0.5) });
    seedRun(api.root, P, CHILD_TASK, '20260101-1200000000-1-2', { agent: 'codex', parent_run_id: '20260101-1200000000-1-1', usage: usage(40, 4) });
    const task = await body(req('GET', `/api/projects/${P}/tasks/${ROOT_TASK}/usage`));
    expect(task).toMatchObject({ project_id: P, task_id: ROOT_TASK, runs: 1, total_tokens: 110, tree: { runs: 2, total_tokens: 154, usage: { ...usage(140, 14, 0.5), cache_read_tokens: 2 } } });
    const project = await body(req('GET', `/api/projects/${P}/usage`));
    expect(project).toMatchObject({ runs: 2, total_tokens: 154 });
    const all = await body(req('GET', `/api/v1/usage?project_id=${P}&since=2026-01-01T00:00:00Z`));
    expect(all.by_agent.map((r: { key: string }) => r.key)).toEqual(['claude', 'codex']);
    const detail = await body(req('GET', `/api/projects/${P}/tasks/${ROOT_TASK}`));
    expect(detail.usage).toEqual({ ...usage(100, 10, 0.5), total_tokens: 110 });
    expect(detail.runs[0].usage).toEqual(usage(100, 10, 0.5));
  });

  it('bad input: 400/404 JSON errors', async () => {
    const since = await req('GET', '/api/v1/usage?since=yesterday');
    expect(since.status).toBe(400);
    expect((await body(since)).error.message).toBe('since must be an RFC 3339 time, got "yesterday"');
    expect((await req('GET', '/api/v1/usage?task_id=task-20260101-120000-x')).status).toBe(400);
    expect((await req('GET', `/api/projects/${P}/tasks/task-20990101-000000-none/usage`)).status).toBe(404);
    expect((await req('POST', '/api/projects/nope/pause')).status).toBe(404);
    expect((await req('POST', `/api/projects/${'a%5Cb'}/pause`)).status).toBe(400);
  });

  it('pause/unpause a task: PAUSED marker, status paused, then released', async () => {
    const res = await req('POST', `/api/projects/${P}/tasks/${CHILD_TASK}/pause`);
    expect(res.status).toBe(200);
    expect(await body(res)).toEqual({ project_id: P, task_id: CHILD_TASK, paused: true, changed: true });
    expect(fs.existsSync(path.join(api.root, P, CHILD_TASK, 'PAUSED'))).toBe(true);
    const list = await body(req('GET', `/api/projects/${P}/tasks?status=paused`));
    expect(list.items.map((t: { id: string }) => t.id)).toEqual([CHILD_TASK]);
    expect(await body(req('POST', `/api/projects/${P}/tasks/${CHILD_TASK}/unpause`))).toEqual({ project_id: P, task_id: CHILD_TASK, paused: false, changed: true });
    expect(fs.existsSync(path.join(api.root, P, CHILD_TASK, 'PAUSED'))).toBe(false);
  });

  it('POST /api/v1/tasks takes budget fields, validated at the door', async () => {
    const base = { project_id: P, agent_type: 'fake', prompt: 'do it' };
    const bad = await req('POST', '/api/v1/tasks', { ...base, task_id: 'task-20260101-120000-bad', max_wall_time: 'soon' });
    expect(bad.status).toBe(400);
    expect((await body(bad)).error.message).toBe('max wall time must be a positive duration like 30m, got "soon"');
    expect(fs.existsSync(path.join(api.root, P, 'task-20260101-120000-bad'))).toBe(false);
    expect((await req('POST', '/api/v1/tasks', { ...base, task_id: 'task-20260101-120000-bad', max_tokens: 'many' })).status).toBe(400);
    const ok = await req('POST', '/api/v1/tasks', { ...base, task_id: 'task-20260101-120000-budget', max_tokens: 5000, max_cost_usd: 1.5, max_wall_time: '2h', resume_mode: 'continue' });
    expect(ok.status).toBe(201);
    expect(fs.readFileSync(path.join(api.root, P, 'task-20260101-120000-budget', 'TASK-SETTINGS.yaml'), 'utf8')).toBe('max_tokens: 5000\nmax_cost_usd: 1.5\nmax_wall_time: 2h0m0s\nresume_mode: continue\n');
  });

  it('finished runs with usage move conductor_agent_tokens_total and conductor_agent_cost_usd_total', async () => {
    const scrape = async () => (await (await fetch(`${api.base}/metrics`)).text()).split('\n');
    const value = (lines: string[], key: string) => Number(lines.find((l) => l.startsWith(`${key} `))?.split(' ')[1] ?? 0);
    const key = 'conductor_agent_tokens_total{agent_type="gemini",project_id="m2",kind="input"}';
    const before = value(await scrape(), key);
    seedRun(api.root, 'm2', 'task-20260101-120000-met', '20260101-1200000000-2-1', { agent: 'gemini', usage: usage(321, 9, 0.25) });
    const after = await scrape();
    expect(value(after, key) - before).toBe(321);
    expect(value(after, 'conductor_agent_tokens_total{agent_type="gemini",project_id="m2",kind="output"}')).toBe(9);
    expect(value(after, 'conductor_agent_cost_usd_total{agent_type="gemini",project_id="m2"}')).toBe(0.25);
    // counted once
    expect(value(await scrape(), key) - before).toBe(321);
  });
});
