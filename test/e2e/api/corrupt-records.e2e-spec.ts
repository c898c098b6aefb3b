/**
 * One bad record is that record's problem (issue #29 finding 3): a run-info.yaml that is garbage,
 * a list, a scalar, a YAML syntax error or has fields of the wrong type, and task state / worktree
 * files that cannot be parsed, must not turn the listings into 500s. Every listing answers 200,
 * shows the bad run as `corrupt` with its reason and the others as they are — also after a restart.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApiApp } from '../../utils/api-app';
import { CORRUPT_RUN_INFO, CORRUPT_KINDS as kinds, RUN, seedCorruptRoot, T } from '../../utils/corrupt-records';

describe('corrupt records (e2e, real files, in-process server)', () => {
  let dir: string;
  let root: string;
  let app: NestFastifyApplication;
  let close: () => Promise<void>;

  const get = async (url: string) => {
    const res = await app.inject({ method: 'GET', url });
    return { status: res.statusCode, body: res.body, json: () => JSON.parse(res.body) };
  };

  async function start(): Promise<void> {
    const api = await createApiApp({ root });
    app = api.app;
    close = api.close;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'corrupt-records-'));
    root = join(dir, 'runs');
    seedCorruptRoot(root);
    await start();
  });
  afterAll(async () => {
    await close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function everyListing(): Promise<void> {
    const projects = await get('/api/projects');
    expect(projects.status).toBe(200);
    expect(projects.json().projects.map((p: { id: string }) => p.id).sort()).toEqual(['bad', 'good']);

    const tasks = await get('/api/projects/bad/tasks');
    expect(tasks.status).toBe(200);
    const byId = new Map<string, { status: string; corrupt_reason?: string }>(tasks.json().items.map((t: { id: string }) => [t.id, t]));
    for (const kind of kinds) {
      expect(byId.get(T(kind))).toMatchObject({ status: 'corrupt', corrupt_reason: expect.stringContaining('run-info') });
    }
    // a task record file that cannot be parsed: the task is corrupt (with the file named), its runs are not
    for (const [ok, file] of [['taskcfg', 'TASK-CONFIG.yaml'], ['worktree', 'WORKTREE.yaml'], ['settings', 'TASK-SETTINGS.yaml']]) {
      expect(byId.get(T(ok))).toMatchObject({ status: 'corrupt', corrupt_reason: expect.stringContaining(file), last_run_status: 'completed' });
    }
    // the latest run decides the task's status; the older corrupt run is shown as such in the run lists
    expect(byId.get(T('mixed'))?.status).toBe('completed');

    for (const kind of kinds) {
      const detail = await get(`/api/projects/bad/tasks/${T(kind)}`);
      expect(detail.status).toBe(200);
      expect(detail.json().runs).toEqual([expect.objectContaining({ id: RUN(kind), status: 'corrupt', corrupt_reason: expect.stringContaining('run-info') })]);
      const runs = await get(`/api/projects/bad/tasks/${T(kind)}/runs`);
      expect(runs.status).toBe(200);
      const run = await get(`/api/projects/bad/tasks/${T(kind)}/runs/${RUN(kind)}`);
      expect(run.status).toBe(200);
      expect(run.json()).toMatchObject({ status: 'corrupt' });
      const v1 = await get(`/api/v1/runs/${RUN(kind)}`);
      expect(v1.status).toBe(200);
      expect(v1.json()).toMatchObject({ status: 'corrupt', corrupt_reason: expect.any(String) });
      expect((await get(`/api/v1/runs/${RUN(kind)}/info`)).status).toBe(200);
      expect((await get(`/api/projects/bad/tasks/${T(kind)}/usage`)).status).toBe(200);
    }
    const mixed = await get(`/api/projects/bad/tasks/${T('mixed')}`);
    expect(mixed.json().runs.map((r: { id: string; status: string }) => [r.id, r.status])).toEqual([
      [RUN('mixed-bad'), 'corrupt'],
      [RUN('mixed-ok'), 'completed'],
    ]);
    for (const ok of ['taskcfg', 'worktree', 'settings']) {
      const detail = await get(`/api/projects/bad/tasks/${T(ok)}`);
      expect(detail.status).toBe(200);
      expect(detail.json()).toMatchObject({ status: 'corrupt', corrupt_reason: expect.any(String) });
      expect(detail.json().runs[0]).toMatchObject({ id: RUN(ok), status: 'completed' });
      const v1 = await get(`/api/v1/tasks/${T(ok)}?project_id=bad`);
      expect(v1.status).toBe(200);
      expect(v1.json()).toMatchObject({ status: 'corrupt', corrupt_reason: expect.any(String) });
    }
    for (const url of [
      '/api/projects/bad',
      '/api/projects/bad/stats',
      '/api/projects/bad/runs/flat',
      '/api/projects/bad/usage',
      '/api/projects/good/tasks',
      '/api/v1/tasks',
      '/api/v1/runs',
      '/api/v1/status',
      '/api/v1/usage',
      '/metrics',
    ]) {
      const res = await get(url);
      if (res.status !== 200) throw new Error(`${url}: ${res.status} ${res.body}`);
    }
    const v1runs = (await get('/api/v1/runs')).json();
    const all = (Array.isArray(v1runs) ? v1runs : v1runs.runs ?? v1runs.items) as { run_id?: string; id?: string; status: string }[];
    expect(all.find((r) => (r.run_id ?? r.id) === RUN('fine'))?.status).toBe('completed');
    expect(all.find((r) => (r.run_id ?? r.id) === RUN('garbage'))?.status).toBe('corrupt');
    expect((await get(`/api/projects/good/tasks/${T('fine')}`)).json().runs[0]).toMatchObject({ status: 'completed' });
  }

  it('every listing answers 200 with the bad runs shown as corrupt and the others normal', async () => {
    await everyListing();
  });

  it('leaves the corrupt files as they were (no write replaces the evidence)', () => {
    for (const kind of kinds) {
      expect(readFileSync(join(root, 'bad', T(kind), 'runs', RUN(kind), 'run-info.yaml'))).toEqual(Buffer.from(CORRUPT_RUN_INFO[kind]));
    }
  });

  it('still answers after a server restart', async () => {
    await close();
    await start();
    await everyListing();
  });
});
