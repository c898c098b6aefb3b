/**
 * The `run-agent server …` / `conductor <sub>` HTTP clients against a scripted API on a real
 * 127.0.0.1 socket: requests sent, output printed, errors and exit codes.
 * Needs the built CLI (`npx nest build cli`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONDUCTOR, FakeApi, runCli, RUN_AGENT, sseHeaders } from './helpers';

describe('server client commands', () => {
  let api: FakeApi;
  let home: string;
  let env: NodeJS.ProcessEnv;

  beforeEach(async () => {
    api = await new FakeApi().start();
    home = mkdtempSync(join(tmpdir(), 'client-home-'));
    env = { HOME: home, CONDUCTOR_URL: '', CONDUCTOR_SERVER: '', CONDUCTOR_API_KEY: '', CONDUCTOR_CLIENT_RETRY_MS: '50', CONDUCTOR_CLIENT_POLL_MS: '50' };
  });
  afterEach(async () => {
    await api.stop();
    rmSync(home, { recursive: true, force: true });
  });

  const status = {
    active_runs_count: 1,
    uptime_seconds: 3723.4,
    configured_agents: ['claude', 'codex'],
    version: '1.2.3',
    running_tasks: [{ project_id: 'proj', task_id: 'task-20260101-000000-abc', run_id: '20260101-0000000000-4242-1', agent: 'claude', started: '2026-01-01T00:00:00Z' }],
  };

  it('server status prints the status table and sends --api-key as a Bearer token', async () => {
    api.json('GET', '/api/v1/status', 200, status);
    const r = await runCli(RUN_AGENT, ['server', 'status', '--server', api.url, '--api-key', 's3cret'], { ...env, TZ: 'UTC' });

    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      'Version:            1.2.3\n' +
        'Uptime:             1h 2m 3s\n' +
        'Active Runs:        1\n' +
        'Configured Agents:  claude, codex\n' +
        '\n' +
        'Running tasks:\n' +
        '  PROJECT  TASK                      RUN                      AGENT   STARTED\n' +
        '  proj     task-20260101-000000-abc  20260101-0000000000-...  claude  00:00:00\n',
    );
    expect(api.requests[0].headers.authorization).toBe('Bearer s3cret');
  });

  it('conductor status is the same client; --json prints the body; CONDUCTOR_URL and CONDUCTOR_API_KEY are honoured', async () => {
    api.json('GET', '/api/v1/status', 200, status);
    const r = await runCli(CONDUCTOR, ['status', '--json'], { ...env, CONDUCTOR_URL: api.url, CONDUCTOR_API_KEY: 'k-env' });

    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(status);
    expect(api.requests[0].headers.authorization).toBe('Bearer k-env');
  });

  it('a non-2xx answer is one line "Error: server returned <code>: <message>" and exit 1', async () => {
    api.json('GET', '/api/v1/tasks/task-20260101-000000-zzz', 404, { error: { code: 'NOT_FOUND', message: 'task not found' } });
    const r = await runCli(RUN_AGENT, ['server', 'task', 'status', 'task-20260101-000000-zzz', '--server', api.url], env);

    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('Error: server returned 404: task not found\n');
  });

  it('an unreachable server gets a clear hint', async () => {
    // Port 1 (tcpmux): privileged, nothing in the suite listens there, so the connection is refused.
    const port = 1;
    const r = await runCli(CONDUCTOR, ['project', 'list', '--server', `http://127.0.0.1:${port}`], env);

    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^Error: cannot reach conductor at http://127\\.0\\.0\\.1:${port}: is it running\\? start it with \`conductor\`\\n$`));
  });

  it('a missing required flag is a usage error (exit 2) and sends nothing', async () => {
    const r = await runCli(RUN_AGENT, ['server', 'job', 'submit', '--server', api.url, '--agent', 'claude', '--prompt', 'x'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('Error: required flag(s) "project" not set\n');
    expect(api.requests).toHaveLength(0);
  });

  it('job submit --follow posts the task, then streams its log over SSE through a reconnect until done', async () => {
    let streams = 0;
    api.json('POST', '/api/v1/tasks', 201, { project_id: 'proj', task_id: 'task-20260101-000000-job', run_id: 'run-1', status: 'started' });
    api.json('GET', '/api/projects/proj/tasks/task-20260101-000000-job', 200, { runs: [{ id: 'run-1', run_id: 'run-1', status: 'running' }] });
    api.on('GET', '/api/projects/proj/tasks/task-20260101-000000-job/runs/run-1/stream?name=stdout', (_req, res) => {
      streams++;
      sseHeaders(res);
      // every connection replays the file from its start, as the server does
      res.write('data: line one\ndata: \n\n');
      if (streams === 1) {
        res.destroy(); // connection drops before the run ends
        return;
      }
      res.write('data: line two\ndata: \n\n');
      res.end('event: done\ndata: run completed\n\n');
    });
    const promptFile = join(home, 'prompt.md');
    writeFileSync(promptFile, 'Do the thing\n');
    const r = await runCli(
      RUN_AGENT,
      ['server', 'job', 'submit', '--server', api.url, '--project', 'proj', '--task', 'task-20260101-000000-job', '--agent', 'command', '--prompt-file', promptFile, '--depends-on', 'task-20260101-000000-dep', '--follow'],
      env,
    );

    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('Task created: task-20260101-000000-job, run_id: run-1\nline one\nline two\n');
    expect(streams).toBe(2);
    const post = api.requests.find((q) => q.method === 'POST')!;
    expect(JSON.parse(post.body)).toEqual({
      project_id: 'proj',
      task_id: 'task-20260101-000000-job',
      agent_type: 'command',
      prompt: 'Do the thing\n',
      attach_mode: 'create',
      depends_on: ['task-20260101-000000-dep'],
    });
  });

  it('job submit --wait polls the run until it has an end time; a generated task id has the upstream shape', async () => {
    let polls = 0;
    api.on('POST', '/api/v1/tasks', (req, res) => {
      const body = JSON.parse(req.body) as { task_id: string };
      res.writeHead(201, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ project_id: 'proj', task_id: body.task_id, run_id: 'run-9', status: 'queued', queue_position: 2 }));
    });
    api.on('GET', '/api/v1/runs/run-9', (_req, res) => {
      polls++;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const ended = polls >= 2;
      res.end(JSON.stringify({ run_id: 'run-9', status: ended ? 'completed' : 'running', end_time: ended ? '2026-01-01T00:00:05Z' : '0001-01-01T00:00:00Z' }));
    });
    const r = await runCli(RUN_AGENT, ['server', 'job', 'submit', '--server', api.url, '--project', 'proj', '--agent', 'command', '--prompt', 'hi', '--wait'], env);

    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const taskId = (JSON.parse(api.requests[0].body) as { task_id: string }).task_id;
    expect(taskId).toMatch(/^task-\d{8}-\d{6}-[0-9a-f]{6}$/);
    expect(r.stdout).toBe(
      `Task created: ${taskId}, run_id: run-9\nQueued for root-task capacity (position 2).\nWaiting for run run-9 to complete...\nRun run-9 completed: status=completed exit_code=0\n`,
    );
    expect(polls).toBe(2);
  });

  it('bus post sends type and body; bus read prints upstream lines', async () => {
    api.json('POST', '/api/projects/proj/tasks/task-20260101-000000-abc/messages', 201, { msg_id: 'MSG-1', timestamp: '2026-01-01T00:00:00Z' });
    api.json('GET', '/api/projects/proj/messages', 200, {
      messages: [
        { msg_id: 'MSG-1', timestamp: '2026-01-02T03:04:05Z', type: 'INFO', project_id: 'proj', body: 'hello' },
        { msg_id: 'MSG-2', timestamp: '2026-01-02T03:04:06.5Z', type: 'QUESTION', project_id: 'proj', body: 'first line\nsecond' },
      ],
    });
    const post = await runCli(CONDUCTOR, ['bus', 'post', '--server', api.url, '--project', 'proj', '--task', 'task-20260101-000000-abc', '--type', 'FACT', '--body', 'it works'], env);
    expect(post.stderr).toBe('');
    expect(post.stdout).toBe('msg_id: MSG-1\n');
    expect(JSON.parse(api.requests[0].body)).toEqual({ type: 'FACT', body: 'it works' });

    const read = await runCli(RUN_AGENT, ['server', 'bus', 'read', '--server', api.url, '--project', 'proj', '--tail', '5'], env);
    expect(read.stderr).toBe('');
    expect(read.stdout).toBe('[2026-01-02 03:04:05] INFO          hello\n[2026-01-02 03:04:06] QUESTION      first line...\n');
  });

  it('task list prints the upstream table', async () => {
    api.json('GET', '/api/projects/proj/tasks?status=running', 200, {
      items: [
        { id: 'task-20260101-000000-aaa', project_id: 'proj', status: 'running', run_count: 3, last_activity: '2026-01-02T03:04:05Z' },
        { id: 'task-20260101-000000-bb', project_id: 'proj', status: 'blocked', run_count: 0, blocked_by: ['task-x', 'task-y'], last_activity: '0001-01-01T00:00:00Z' },
      ],
      total: 2,
      limit: 50,
      offset: 0,
      has_more: false,
    });
    const r = await runCli(RUN_AGENT, ['server', 'task', 'list', '--server', api.url, '--project', 'proj', '--status', 'running'], { ...env, TZ: 'UTC' });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(
      'TASK ID                   STATUS   RUNS  BLOCKED_BY     LAST ACTIVITY\n' +
        'task-20260101-000000-aaa  running  3     -              2026-01-02 03:04\n' +
        'task-20260101-000000-bb   blocked  0     task-x,task-y  -\n',
    );
  });

  it('task list pages with --limit/--offset and its hint names flags that exist', async () => {
    const item = { id: 'task-20260101-000000-aaa', status: 'done', run_count: 1, last_activity: '0001-01-01T00:00:00Z' };
    api.json('GET', '/api/projects/proj/tasks?limit=1&offset=2', 200, { items: [item], total: 4, limit: 1, offset: 2, has_more: true });
    const r = await runCli(CONDUCTOR, ['task', 'list', '--server', api.url, '--project', 'proj', '--limit', '1', '--offset', '2'], env);
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n').slice(-2)).toEqual(['(showing 1 of 4 tasks from 2; use --limit (up to 500) and --offset to see more)', '']);
    expect(api.requests.map((q) => q.url)).toEqual(['/api/projects/proj/tasks?limit=1&offset=2']);
  });

  it('project list and job list follow next_cursor to the last page (issue #29); --json prints every page as one list', async () => {
    const project = (id: string) => ({ id, task_count: 1, last_activity: '2026-01-02T03:04:05Z' });
    api.json('GET', '/api/projects?limit=5000', 200, { projects: [project('p1'), project('p2')], has_more: true, next_cursor: 'c/1' });
    api.json('GET', '/api/projects?limit=5000&after=c%2F1', 200, { projects: [project('p3')], has_more: false });
    const task = (t: string) => ({ project_id: 'proj', task_id: t, status: 'idle', last_activity: '0001-01-01T00:00:00Z' });
    api.json('GET', '/api/v1/tasks?limit=5000', 200, { tasks: [task('task-a')], has_more: true, next_cursor: 'proj/task-a' });
    api.json('GET', '/api/v1/tasks?limit=5000&after=proj%2Ftask-a', 200, { tasks: [task('task-b')], has_more: false });

    const list = await runCli(CONDUCTOR, ['project', 'list', '--server', api.url], { ...env, TZ: 'UTC' });
    expect([list.stderr, list.stdout.split('\n').slice(1, -1).map((l) => l.split(' ')[0])]).toEqual(['', ['p1', 'p2', 'p3']]);
    const json = await runCli(RUN_AGENT, ['server', 'project', 'list', '--server', api.url, '--json'], env);
    expect(JSON.parse(json.stdout)).toEqual({ projects: [project('p1'), project('p2'), project('p3')] });
    const jobs = await runCli(CONDUCTOR, ['job', 'list', '--server', api.url, '--json'], env);
    expect(JSON.parse(jobs.stdout)).toEqual({ tasks: [task('task-a'), task('task-b')] });
    expect(api.requests.map((r) => r.url)).toEqual([
      '/api/projects?limit=5000',
      '/api/projects?limit=5000&after=c%2F1',
      '/api/projects?limit=5000',
      '/api/projects?limit=5000&after=c%2F1',
      '/api/v1/tasks?limit=5000',
      '/api/v1/tasks?limit=5000&after=proj%2Ftask-a',
    ]);
  });

  it('project gc, project delete (409) and task stop send upstream requests and print upstream lines', async () => {
    api.json('POST', '/api/projects/proj/gc', 200, { deleted_runs: 3, freed_bytes: 1536, dry_run: true });
    api.json('DELETE', '/api/projects/busy', 409, { error: { code: 'CONFLICT', message: 'project has 2 running task(s)' } });
    api.json('DELETE', '/api/v1/tasks/task-20260101-000000-aaa', 202, { stopped_runs: 2 });

    const gc = await runCli(CONDUCTOR, ['project', 'gc', '--server', api.url, '--project', 'proj', '--older-than', '24h', '--dry-run'], env);
    expect(gc.stderr).toBe('');
    expect(gc.stdout).toBe('DRY RUN: would delete 3 runs, free 1.50 KB\n');
    expect(api.requests[0].url).toBe('/api/projects/proj/gc?older_than=24h&dry_run=true&keep_failed=false');

    const del = await runCli(RUN_AGENT, ['server', 'project', 'delete', 'busy', '--server', api.url], env);
    expect(del.code).toBe(1);
    expect(del.stderr).toBe('Error: project has 2 running task(s)\n');

    const stop = await runCli(RUN_AGENT, ['server', 'task', 'stop', 'task-20260101-000000-aaa', '--project', 'proj', '--server', api.url], env);
    expect(stop.stderr).toBe('');
    expect(stop.stdout).toBe('Task task-20260101-000000-aaa: stopped 2 run(s)\n');
    expect(api.requests[2]).toMatchObject({ method: 'DELETE', url: '/api/v1/tasks/task-20260101-000000-aaa?project_id=proj' });
  });

  it('update status prints the self-update state; update start requires --package (or --binary)', async () => {
    api.json('GET', '/api/v1/admin/self-update', 200, {
      state: 'deferred',
      binary_path: '/opt/run-agent.new',
      requested_at: '2026-01-02T03:04:05Z',
      started_at: '0001-01-01T00:00:00Z',
      finished_at: '0001-01-01T00:00:00Z',
      active_runs_now: 2,
    });
    const status = await runCli(CONDUCTOR, ['update', 'status', '--server', api.url], { ...env, TZ: 'UTC' });
    expect(status.stderr).toBe('');
    expect(status.stdout).toBe('State:             deferred\nActive Root Runs:  2\nCandidate Binary:  /opt/run-agent.new\nRequested At:      2026-01-02T03:04:05Z\n');

    const start = await runCli(RUN_AGENT, ['server', 'update', 'start', '--server', api.url], env);
    expect(start.code).toBe(2);
    expect(start.stderr).toBe('Error: required flag(s) "package" not set\n');
    expect(api.requests).toHaveLength(1);
  });

  it('watch polls until every watched task is terminal', async () => {
    let polls = 0;
    api.on('GET', '/api/projects/proj/tasks/task-20260101-000000-aaa', (_req, res) => {
      polls++;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ status: polls >= 2 ? 'completed' : 'running', runs: [{}, {}] }));
    });
    const r = await runCli(CONDUCTOR, ['watch', '--server', api.url, '--project', 'proj', '--task', 'task-20260101-000000-aaa', '--interval', '50ms', '--json'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ tasks: [{ task_id: 'task-20260101-000000-aaa', status: 'completed', run_count: 2, done: true }], all_done: true });
    expect(polls).toBe(2);
  });

  it('watch without --task walks every page of the project task list (not only the first 50)', async () => {
    const item = (id: string) => ({ id, status: 'completed', run_count: 1 });
    api.json('GET', '/api/projects/proj/tasks?limit=500&offset=0', 200, { items: [item('task-a'), item('task-b')], total: 3, limit: 500, offset: 0, has_more: true });
    api.json('GET', '/api/projects/proj/tasks?limit=500&offset=2', 200, { items: [item('task-c')], total: 3, limit: 500, offset: 2, has_more: false });
    const r = await runCli(CONDUCTOR, ['watch', '--server', api.url, '--project', 'proj', '--json'], env);
    expect([r.stderr, r.code]).toEqual(['', 0]);
    expect(JSON.parse(r.stdout).tasks.map((t: { task_id: string }) => t.task_id)).toEqual(['task-a', 'task-b', 'task-c']);
  });
});
