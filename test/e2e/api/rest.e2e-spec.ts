import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { BusWriter } from '@app/messagebus';
import { createApiApp, TestApi } from '../../utils/api-app';
import { killGroup, runningFields, seedRun, spawnSleeper } from '../../utils/run-fixtures';

const P = 'proj';
const T1 = 'task-20260101-120000-alpha';
const T2 = 'task-20260101-130000-beta';
const R1 = '20260101-1200000000-100-1';
const R2 = '20260101-1300000000-100-2';
const R3 = '20260101-1400000000-100-3';

describe('REST routes', () => {
  let api: TestApi;
  let sleeper: ChildProcess;
  const inject = (method: string, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    api.app.inject({ method: method as 'GET', url, payload: payload as object, headers });

  beforeAll(async () => {
    api = await createApiApp();
    sleeper = spawnSleeper();
    seedRun(api.root, P, T1, R1, {}, 'line one\nline two\nline three\n');
    fs.writeFileSync(path.join(api.root, P, T1, 'TASK.md'), 'alpha prompt\n');
    fs.writeFileSync(path.join(api.root, P, T1, 'DONE'), '');
    seedRun(api.root, P, T2, R2, { status: 'failed', exit_code: 3, agent: 'fake', start_time: new Date('2026-01-01T13:00:00Z') });
    seedRun(api.root, P, T2, R3, { ...runningFields(sleeper), previous_run_id: R2 });
    fs.writeFileSync(path.join(api.root, P, T2, 'TASK.md'), 'beta prompt\n');
    const bus = new BusWriter(path.join(api.root, P, 'PROJECT-MESSAGE-BUS.md'));
    for (let i = 1; i <= 3; i++) await bus.append({ type: 'INFO', project_id: P, task_id: '', run_id: '', body: `hello ${i}` });
  });
  afterAll(async () => {
    killGroup(sleeper);
    await api.close();
  });

  it('GET /healthz, /api/v1/version and /api/v1/status', async () => {
    const h = await inject('GET', '/healthz');
    expect(h.json()).toEqual({ status: 'ok', uptime: expect.stringMatching(/^\d+s$/) });
    expect((await inject('GET', '/api/v1/version')).json()).toEqual({ version: expect.any(String) });
    const s = (await inject('GET', '/api/v1/status')).json();
    expect(s.active_runs_count).toBe(1);
    expect(s.configured_agents).toEqual(['fake']);
    expect(s.default_agent).toBe('fake'); // config defaults.agent: the dashboard's New task dialog preselects it (#30.11)
    expect(s.running_tasks).toEqual([{ project_id: P, task_id: T2, run_id: R3, agent: 'fake', started: expect.any(String) }]);
  });

  it('lists runs (#13, #14, #15) with v1 quirks', async () => {
    const runs = (await inject('GET', '/api/v1/runs')).json().runs;
    expect(runs.map((r: { run_id: string }) => r.run_id)).toEqual([R1, R2, R3]);
    const ok = runs[0];
    expect(ok).not.toHaveProperty('exit_code');
    expect(ok.end_time).toBe('2026-01-01T12:01:00Z');
    expect(runs[1].exit_code).toBe(3);
    expect(runs[2].end_time).toBe('0001-01-01T00:00:00Z');
    expect(runs[2].exit_code).toBe(-1);
    expect((await inject('GET', `/api/v1/runs/${R2}`)).json()).toMatchObject({ run_id: R2, status: 'failed', exit_code: 3 });
    const info = await inject('GET', `/api/v1/runs/${R1}/info`);
    expect(info.headers['content-type']).toContain('application/x-yaml');
    expect(info.body).toContain(`run_id: ${R1}`);
    const missing = await inject('GET', '/api/v1/runs/20990101-0000000000-1-1');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'run not found' } });
  });

  it('rejects stopping a finished run (#16) with 409', async () => {
    const res = await inject('POST', `/api/v1/runs/${R1}/stop`);
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toEqual({ code: 'CONFLICT', message: 'run already finished' });
  });

  it('lists v1 tasks (#9) and one task (#11)', async () => {
    const tasks = (await inject('GET', '/api/v1/tasks')).json().tasks;
    expect(tasks.map((t: { task_id: string; status: string }) => [t.task_id, t.status])).toEqual([
      [T1, 'all_finished'],
      [T2, 'partial_failure'],
    ]);
    expect((await inject('GET', `/api/v1/tasks?project_id=${P}`)).json().tasks).toHaveLength(2);
    expect((await inject('GET', '/api/v1/tasks?project_id=other')).json().tasks).toEqual([]);
    expect((await inject('GET', '/api/v1/tasks?project_id=..')).statusCode).toBe(400);
    const one = (await inject('GET', `/api/v1/tasks/${T2}`)).json();
    expect(one.runs.map((r: { run_id: string }) => r.run_id)).toEqual([R2, R3]);
    expect((await inject('GET', `/api/v1/tasks/${T2}?project_id=other`)).statusCode).toBe(404);
    expect((await inject('GET', '/api/v1/tasks/task-20990101-000000-none')).json().error.message).toBe('task not found');
    fs.mkdirSync(path.join(api.root, 'other', 'task-20260101-120000-twice'), { recursive: true });
    fs.mkdirSync(path.join(api.root, P, 'task-20260101-120000-twice'), { recursive: true });
    const twice = await inject('GET', '/api/v1/tasks/task-20260101-120000-twice');
    expect(twice.statusCode).toBe(409);
    expect(twice.json().error).toEqual({ code: 'CONFLICT', message: 'multiple tasks found', details: { task_id: 'task-20260101-120000-twice' } });
    fs.rmSync(path.join(api.root, 'other'), { recursive: true });
    fs.rmSync(path.join(api.root, P, 'task-20260101-120000-twice'), { recursive: true });
  });

  it('lists projects (#21), one project (#24), stats (#26) and home dirs (#23)', async () => {
    const projects = (await inject('GET', '/api/projects')).json().projects;
    expect(projects).toEqual([{ id: P, last_activity: expect.any(String), task_count: 2, project_root: '/tmp' }]);
    expect((await inject('GET', `/api/projects/${P}`)).json().id).toBe(P);
    expect((await inject('GET', '/api/projects/nope')).statusCode).toBe(404);
    const stats = (await inject('GET', `/api/projects/${P}/stats`)).json();
    expect(stats).toMatchObject({ project_id: P, total_tasks: 2, total_runs: 3, running_runs: 1, completed_runs: 1, failed_runs: 1, crashed_runs: 0, message_bus_files: 1 });
    expect(stats.message_bus_total_bytes).toBeGreaterThan(0);
    expect((await inject('GET', '/api/projects/home-dirs')).json()).toEqual({ dirs: ['/tmp'] });
  });

  it('creates a project (#22) with validation and 409 on repeats', async () => {
    const dir = fs.mkdtempSync(path.join(api.dir, 'work-'));
    const created = await inject('POST', '/api/projects', { project_id: 'newproj', project_root: dir });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ id: 'newproj', task_count: 0, project_root: dir });
    expect(fs.readFileSync(path.join(api.root, 'newproj', 'PROJECT-ROOT.txt'), 'utf8')).toBe(`${dir}\n`);
    expect((await inject('POST', '/api/projects', { project_id: 'newproj', project_root: dir })).statusCode).toBe(409);
    const rel = await inject('POST', '/api/projects', { project_id: 'x2', project_root: 'relative/dir' });
    expect(rel.json().error.message).toBe('project_root must be an absolute path or use ~/...');
    const unknown = await inject('POST', '/api/projects', { project_id: 'x3', project_root: dir, evil: 1 });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.message).toContain('property evil should not exist');
  });

  it('pages project tasks (#32) with filters', async () => {
    const page = (await inject('GET', `/api/projects/${P}/tasks?limit=1`)).json();
    expect(page).toMatchObject({ total: 2, limit: 1, offset: 0, has_more: true });
    expect(page.items[0]).toMatchObject({ id: T2, status: 'partial_failure', run_count: 2, run_counts: { failed: 1, running: 1 }, done: false, last_run_status: 'running', last_run_exit_code: -1 });
    const done = (await inject('GET', `/api/projects/${P}/tasks?status=done`)).json();
    expect(done.items.map((t: { id: string }) => t.id)).toEqual([T1]);
    const clamp = (await inject('GET', `/api/projects/${P}/tasks?limit=9999&offset=-3`)).json();
    expect([clamp.limit, clamp.offset, clamp.has_more]).toEqual([500, 0, false]);
    expect((await inject('GET', '/api/projects/unknown/tasks')).json()).toEqual({ items: [], total: 0, limit: 50, offset: 0, has_more: false });
  });

  it('returns task detail (#33), task file (#36), task runs (#40)', async () => {
    const detail = (await inject('GET', `/api/projects/${P}/tasks/${T1}`)).json();
    expect(detail).toMatchObject({ id: T1, status: 'all_finished', state: 'done', done: true });
    expect(detail.runs[0]).toMatchObject({ id: R1, run_id: R1, exit_code: 0, process_ownership: 'managed' });
    expect(detail.runs[0].files.map((f: { name: string }) => f.name)).toEqual(['stdout', 'stderr', 'prompt']);
    const noFiles = (await inject('GET', `/api/projects/${P}/tasks/${T1}?include_files=0`)).json();
    expect(noFiles.runs[0].files).toBeUndefined();
    const file = (await inject('GET', `/api/projects/${P}/tasks/${T1}/file?name=TASK.md`)).json();
    expect(file).toMatchObject({ name: 'TASK.md', content: 'alpha prompt\n', size_bytes: 13 });
    expect((await inject('GET', `/api/projects/${P}/tasks/${T1}/file?name=DONE`)).json().error.message).toBe('unknown task file: DONE');
    const runs = (await inject('GET', `/api/projects/${P}/tasks/${T2}/runs`)).json();
    expect(runs.items.map((r: { id: string }) => r.id)).toEqual([R3, R2]);
    expect((await inject('GET', `/api/projects/${P}/tasks/task-20990101-000000-none/runs`)).statusCode).toBe(404);
    expect((await inject('GET', `/api/projects/${P}/tasks/${T1}/nonsense/path`)).statusCode).toBe(404);
  });

  it('returns run detail (#42) with the D12 superset and run files (#45) with tail', async () => {
    const run = (await inject('GET', `/api/projects/${P}/tasks/${T1}/runs/${R1}`)).json();
    expect(run).toMatchObject({ id: R1, run_id: R1, cwd: '/tmp', pid: 0, pgid: 0, commandline: 'fake-command-agent', agent: 'fake', status: 'completed', end_time: '2026-01-01T12:01:00Z' });
    const whole = (await inject('GET', `/api/projects/${P}/tasks/${T1}/runs/${R1}/file?name=stdout`)).json();
    expect(whole).toMatchObject({ name: 'stdout', content: 'line one\nline two\nline three\n', size_bytes: 29 });
    const tail = (await inject('GET', `/api/projects/${P}/tasks/${T1}/runs/${R1}/file?name=stdout&tail=2`)).json();
    expect(tail.content).toBe('line two\nline three\n');
    expect((await inject('GET', `/api/projects/${P}/tasks/${T1}/runs/${R1}/file?name=output.md`)).json().error.message).toBe('file not found: output.md');
    expect((await inject('GET', `/api/projects/${P}/tasks/${T1}/runs/${R1}/file?name=secret`)).json().error.message).toBe('unknown file: secret');
    expect((await inject('GET', `/api/projects/${P}/tasks/${T2}/runs/${R1}`)).json().error.message).toBe('run not found');
  });

  it('confines run files to the root (403)', async () => {
    seedRun(api.root, 'escape', 'task-20260101-120000-esc', '20260101-1200000000-7-1', { stdout_path: '/etc/hostname' });
    const res = await inject('GET', '/api/projects/escape/tasks/task-20260101-120000-esc/runs/20260101-1200000000-7-1/file?name=stdout');
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toEqual({ code: 'FORBIDDEN', message: 'run file path escapes configured root' });
  });

  it('selects flat runs (#27)', async () => {
    const all = (await inject('GET', `/api/projects/${P}/runs/flat`)).json().runs;
    expect(all.map((r: { id: string }) => r.id)).toEqual([R1, R2, R3]);
    const active = (await inject('GET', `/api/projects/${P}/runs/flat?active_only=1`)).json().runs;
    expect(active.map((r: { id: string }) => r.id)).toEqual([R2, R3]);
    const sel = (await inject('GET', `/api/projects/${P}/runs/flat?selected_task_id=${T1}&selected_task_limit=1`)).json().runs;
    expect(sel.map((r: { id: string }) => r.id)).toEqual([R1]);
    const bad = await inject('GET', `/api/projects/${P}/runs/flat?selected_task_limit=-1`);
    expect(bad.json().error).toEqual({ code: 'BAD_REQUEST', message: 'invalid selected_task_limit', details: { selected_task_limit: 'must be a non-negative integer' } });
  });

  it('lists, pages and posts messages (#18, #19, #29, #30, #37, #38)', async () => {
    const all = (await inject('GET', `/api/projects/${P}/messages`)).json().messages;
    expect(all.map((m: { body: string }) => m.body)).toEqual(['hello 1', 'hello 2', 'hello 3']);
    const last = (await inject('GET', `/api/projects/${P}/messages?limit=1`)).json().messages;
    expect(last.map((m: { body: string }) => m.body)).toEqual(['hello 3']);
    const after = (await inject('GET', `/api/projects/${P}/messages?since=${all[0].msg_id}`)).json().messages;
    expect(after.map((m: { body: string }) => m.body)).toEqual(['hello 2', 'hello 3']);
    const gone = await inject('GET', `/api/projects/${P}/messages?since=MSG-19990101-000000-000000000-PID00001-0001`);
    expect(gone.statusCode).toBe(404);
    expect(gone.json().error.message).toBe('message id not found');

    const posted = await inject('POST', `/api/projects/${P}/tasks/${T1}/messages`, { type: 'QUESTION', body: 'why?' });
    expect(posted.statusCode).toBe(201);
    expect(posted.json()).toEqual({ msg_id: expect.stringMatching(/^MSG-/), timestamp: expect.any(String) });
    const taskMsgs = (await inject('GET', `/api/projects/${P}/tasks/${T1}/messages`)).json().messages;
    expect(taskMsgs).toEqual([expect.objectContaining({ type: 'QUESTION', body: 'why?', project_id: P, task_id: T1 })]);
    expect((await inject('POST', `/api/projects/${P}/messages`, { project_id: P, body: 'x' })).statusCode).toBe(400);
    expect((await inject('POST', `/api/projects/${P}/messages`, { body: '   ' })).json().error.message).toBe('body is required');

    const v1 = await inject('POST', '/api/v1/messages', { project_id: P, task_id: T2, body: 'v1 message' });
    expect(v1.statusCode).toBe(201);
    const v1list = (await inject('GET', `/api/v1/messages?project_id=${P}&task_id=${T2}`)).json().messages;
    expect(v1list.map((m: { body: string; type: string }) => [m.type, m.body])).toEqual([['USER', 'v1 message']]);
    expect((await inject('GET', '/api/v1/messages')).json().error.message).toBe('project_id is required');
    expect((await inject('GET', `/api/v1/messages?project_id=${P}&after=nope`)).statusCode).toBe(404);
  });

  it('resumes a done task (#35) and refuses when there is nothing to resume', async () => {
    const res = await inject('POST', `/api/projects/${P}/tasks/${T1}/resume`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ project_id: P, task_id: T1, resumed: true });
    expect(fs.existsSync(path.join(api.root, P, T1, 'DONE'))).toBe(false);
    const again = await inject('POST', `/api/projects/${P}/tasks/${T1}/resume`);
    expect(again.json().error.message).toBe('task has no DONE file; nothing to resume');
  });

  it('deletes runs (#43), tasks (#34), garbage-collects (#28) and deletes projects (#25)', async () => {
    expect((await inject('DELETE', `/api/projects/${P}/tasks/${T2}/runs/${R3}`)).json().error).toEqual({ code: 'CONFLICT', message: 'run is still running', details: { status: 'running' } });
    expect((await inject('DELETE', `/api/projects/${P}/tasks/${T2}`)).statusCode).toBe(409);
    const delRun = await inject('DELETE', `/api/projects/${P}/tasks/${T2}/runs/${R2}`);
    expect(delRun.statusCode).toBe(204);
    expect(fs.existsSync(path.join(api.root, P, T2, 'runs', R2))).toBe(false);
    const dry = (await inject('POST', `/api/projects/${P}/gc?older_than=1h&dry_run=true`)).json();
    expect(dry).toEqual({ deleted_runs: 1, freed_bytes: expect.any(Number), dry_run: true });
    expect(fs.existsSync(path.join(api.root, P, T1, 'runs', R1))).toBe(true);
    expect((await inject('POST', `/api/projects/${P}/gc?older_than=7d`)).json().error.message).toContain('invalid older_than');
    const gc = (await inject('POST', `/api/projects/${P}/gc?older_than=1h`)).json();
    expect(gc.deleted_runs).toBe(1);
    expect(fs.existsSync(path.join(api.root, P, T1, 'runs', R1))).toBe(false);
    expect((await inject('DELETE', `/api/projects/${P}/tasks/${T1}`)).statusCode).toBe(204);
    expect(fs.existsSync(path.join(api.root, P, T1))).toBe(false);
    expect((await inject('DELETE', `/api/projects/${P}`)).json().error.message).toBe('project has running tasks; stop them first or use --force');
    const forced = await inject('DELETE', `/api/projects/${P}?force=true`);
    expect(forced.statusCode).toBe(200);
    expect(forced.json()).toMatchObject({ project_id: P, deleted_tasks: 1 });
    expect(fs.existsSync(path.join(api.root, P))).toBe(false);
  });

  it('lists runs of storage.extra_roots (run-info and legacy cwd.txt) without serving their files', async () => {
    const extra = path.join(api.dir, 'extra');
    const withInfo = seedRun(path.join(extra, 'x'), 'p', 't', 'r', { run_id: '20260101-0900000000-5-1', project_id: 'extproj', task_id: 'task-20260101-090000-ext' });
    const flat = path.join(extra, 'runs', 'run-a');
    fs.mkdirSync(path.dirname(flat), { recursive: true });
    fs.renameSync(withInfo, flat);
    const legacy = path.join(extra, 'runs', 'run_20260101-080000-77');
    fs.mkdirSync(legacy);
    fs.writeFileSync(path.join(legacy, 'cwd.txt'), 'RUN_ID=run_20260101-080000-77\nCWD=/home/me/legacyproj\nAGENT=claude\nEXIT_CODE=0\n');
    const ext = await createApiApp({ extraYaml: `storage:\n  extra_roots: ["${extra}"]` });
    try {
      const get = async (url: string) => (await ext.app.inject({ method: 'GET', url })).json();
      const projects = (await get('/api/projects')).projects.map((p: { id: string }) => p.id);
      expect(projects.sort()).toEqual(['extproj', 'legacyproj']);
      const runs = (await get('/api/v1/runs')).runs;
      expect(runs).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ run_id: '20260101-0900000000-5-1', project_id: 'extproj', status: 'completed' }),
          expect.objectContaining({ run_id: 'run_20260101-080000-77', project_id: 'legacyproj', status: 'completed' }),
        ]),
      );
      const tasks = (await get('/api/projects/extproj/tasks')).items;
      expect(tasks.map((t: { id: string }) => t.id)).toEqual(['task-20260101-090000-ext']);
      const file = await ext.app.inject({ method: 'GET', url: '/api/projects/extproj/tasks/task-20260101-090000-ext/runs/20260101-0900000000-5-1/file?name=stdout' });
      expect(file.statusCode).toBe(403);
    } finally {
      await ext.close();
    }
  });

  it('answers the self-update status (idle until an update is requested)', async () => {
    const res = await inject('GET', '/api/v1/admin/self-update');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ state: 'idle', requested_at: '0001-01-01T00:00:00Z', started_at: '0001-01-01T00:00:00Z', finished_at: '0001-01-01T00:00:00Z' });
  });

  it('answers wrong methods with 405 (plain text on /healthz and /metrics)', async () => {
    const put = await inject('PUT', '/api/projects');
    expect(put.statusCode).toBe(405);
    expect(put.json()).toEqual({ error: { code: 'METHOD_NOT_ALLOWED', message: 'method not allowed' } });
    const healthz = await inject('POST', '/healthz');
    expect(healthz.statusCode).toBe(405);
    expect(healthz.headers['content-type']).toContain('text/plain');
    expect(healthz.body).toBe('method not allowed\n');
    expect((await inject('DELETE', '/metrics')).statusCode).toBe(405);
  });

  it('answers unknown API paths with a JSON 404', async () => {
    const res = await inject('GET', '/api/v1/nothing-here');
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('NOT_FOUND');
  });
});
