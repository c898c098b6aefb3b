/**
 * Issue #15: the task list skips probing marker files its task folder's cached listing does not
 * hold, and runs/flat keeps each run's JSON, the project's run order and its last body while the
 * run-infos are unchanged. Both caches must show
 * a change to the very next request. Folders and run-infos are backdated before the first request,
 * so the caches are trusted (past the racy-timestamp window) when the change lands.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ProjectDataService } from '../../../apps/api/src/projects/project-data.service';
import { listenApiApp, TestApi } from '../../utils/api-app';
import { seedRun } from '../../utils/run-fixtures';

const P = 'caches';
const T = 'task-20260101-120000-cached';
const RUN = '20260101-1200000000-1-1';
const LONG_AGO = new Date('2025-06-01T00:00:00Z');

describe('listing caches see every change at once (real server)', () => {
  let api: TestApi & { base: string };
  const taskDir = () => path.join(api.root, P, T);
  const get = async (url: string): Promise<any> => {
    const res = await fetch(`${api.base}${url}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    return res.json();
  };
  const listItem = async () => ((await get(`/api/projects/${P}/tasks?limit=50`)).items as Array<Record<string, unknown>>).find((t) => t.id === T);
  const flatRun = async () => ((await get(`/api/projects/${P}/runs/flat`)).runs as Array<Record<string, unknown>>).find((r) => r.id === RUN);
  /** Makes the task folder and the run-info look old, so the index trusts what it cached. */
  const backdate = () => {
    fs.utimesSync(path.join(taskDir(), 'runs', RUN, 'run-info.yaml'), LONG_AGO, LONG_AGO);
    fs.utimesSync(taskDir(), LONG_AGO, LONG_AGO);
    fs.utimesSync(path.join(api.root, P), LONG_AGO, LONG_AGO);
  };

  beforeEach(async () => {
    api = await listenApiApp();
    seedRun(api.root, P, T, RUN, { status: 'completed', exit_code: 0 });
    backdate();
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await api.close();
  });

  it('a marker file written after a listing shows in the next task list', async () => {
    expect(await listItem()).toMatchObject({ status: 'completed', done: false, thread_parent: null, depends_on: null });
    fs.writeFileSync(path.join(taskDir(), 'BUDGET-EXCEEDED'), 'over budget\n');
    expect(await listItem()).toMatchObject({ status: 'budget_exceeded', budget_exceeded: 'over budget' });
    fs.rmSync(path.join(taskDir(), 'BUDGET-EXCEEDED'));
    fs.writeFileSync(path.join(taskDir(), 'TASK-THREAD-LINK.yaml'), 'parent_project_id: p0\nparent_task_id: t0\n');
    expect((await listItem())?.thread_parent).toMatchObject({ project_id: 'p0', task_id: 't0' });
    fs.writeFileSync(path.join(taskDir(), 'DONE'), '');
    expect(await listItem()).toMatchObject({ status: 'all_finished', done: true });
  });

  it('a PAUSED file in the project folder holds the task at the next request', async () => {
    expect(await listItem()).toMatchObject({ status: 'completed' });
    fs.writeFileSync(path.join(api.root, P, 'PAUSED'), 'paused by test\n');
    expect(await listItem()).toMatchObject({ status: 'paused', paused: 'project' });
  });

  it('a rewritten run-info shows in the next runs/flat (its JSON is not served from the cache)', async () => {
    expect(await flatRun()).toMatchObject({ status: 'completed', agent: 'fake' });
    expect(await flatRun()).toMatchObject({ status: 'completed', agent: 'fake' });
    seedRun(api.root, P, T, RUN, { status: 'failed', exit_code: 3, agent: 'other' });
    expect(await flatRun()).toMatchObject({ status: 'failed', exit_code: 3, agent: 'other', display_status: 'failed' });
    // a stopped run's display_status follows the task's CANCELLED marker, written after the listing
    seedRun(api.root, P, T, RUN, { status: 'failed', exit_code: 143, error_summary: 'stopped by run-agent stop (pid 1) (SIGTERM)' });
    backdate();
    expect(await flatRun()).toMatchObject({ display_status: 'stopped' });
    expect(await flatRun()).toMatchObject({ display_status: 'stopped' });
    fs.writeFileSync(path.join(taskDir(), 'CANCELLED'), 'cancelled_at: 2026-01-01T00:00:00Z\nreason: r\n');
    expect(await flatRun()).toMatchObject({ display_status: 'cancelled' });
  });

  it('a new run shows in the next runs/flat and task list', async () => {
    expect((await get(`/api/projects/${P}/runs/flat`)).runs).toHaveLength(1);
    seedRun(api.root, P, T, '20260101-1200000000-1-2', { start_time: new Date('2026-01-01T13:00:00Z') });
    expect((await get(`/api/projects/${P}/runs/flat`)).runs.map((r: { id: string }) => r.id)).toEqual([RUN, '20260101-1200000000-1-2']);
    expect(await listItem()).toMatchObject({ run_count: 2 });
  });

  it('runs/flat follows a changed start time, a removed run and other queries at once (kept order and body are not reused)', async () => {
    const RUN2 = '20260101-1200000000-1-2';
    seedRun(api.root, P, T, RUN2, { start_time: new Date('2026-01-01T13:00:00Z') });
    const ids = async (query = '') => ((await get(`/api/projects/${P}/runs/flat${query}`)).runs as Array<{ id: string }>).map((r) => r.id);
    expect(await ids()).toEqual([RUN, RUN2]);
    expect(await ids()).toEqual([RUN, RUN2]);
    seedRun(api.root, P, T, RUN, { start_time: new Date('2026-01-01T14:00:00Z') });
    expect(await ids()).toEqual([RUN2, RUN]);
    expect(await ids(`?selected_task_id=${T}&selected_task_limit=1`)).toEqual([RUN]);
    expect(await ids()).toEqual([RUN2, RUN]);
    fs.rmSync(path.join(taskDir(), 'runs', RUN2), { recursive: true });
    expect(await ids()).toEqual([RUN]);
  });

  it('task lists in flight together share one pass over the runs; a request sent after a write never shares an older pass', async () => {
    const passes = jest.spyOn(ProjectDataService.prototype, 'runs');
    const page = () => api.app.inject({ method: 'GET', url: `/api/projects/${P}/tasks?limit=50` }).then((r) => r.json());
    const first = await Promise.all(Array.from({ length: 10 }, page));
    expect(first.map((l) => l.items[0].run_count)).toEqual(Array(10).fill(1));
    expect(passes).toHaveBeenCalledTimes(1);
    seedRun(api.root, P, T, '20260101-1200000000-1-2', { start_time: new Date('2026-01-01T13:00:00Z') });
    const second = await Promise.all(Array.from({ length: 10 }, page));
    expect(second.map((l) => l.items[0].run_count)).toEqual(Array(10).fill(2));
    expect(passes).toHaveBeenCalledTimes(2);
    // over real sockets, with other requests in flight: every request sent after the write sees it
    const inFlight = Array.from({ length: 10 }, () => listItem());
    fs.writeFileSync(path.join(taskDir(), 'DONE'), '');
    const after = await Promise.all(Array.from({ length: 10 }, () => listItem()));
    await Promise.all(inFlight);
    expect(after.map((t) => t?.done)).toEqual(Array(10).fill(true));
  });
});
