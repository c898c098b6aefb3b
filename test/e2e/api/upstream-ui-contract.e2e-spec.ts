// Replays the request sequence the upstream React dashboard (jonnyzzz/conductor-loop frontend/, api.md
// §1.4 MIN routes) makes against our server over a real socket, with the query strings and headers it
// sends, and checks the JSON fields and SSE event names it reads. The agent is a real scripted
// executable (test/fixtures/ui/ui-agent) run as a `command` agent.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '@app/storage';
import { listenApiApp, openSse, SseClient, SseEvent, TestApi, waitUntil } from '../../utils/api-app';

jest.setTimeout(60_000);

const UI_AGENT = path.join(__dirname, '..', '..', 'fixtures', 'ui', 'ui-agent');
const P = 'upstream-ui';
const T = 'task-20260301-101500-contract';
const UI = { 'X-Conductor-Client': 'web-ui' };
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

const named = (events: SseEvent[], name: string) => events.filter((e) => e.event === name).map((e) => JSON.parse(e.data));

describe('upstream React UI request contract (api.md §1.4)', () => {
  let api: TestApi & { base: string };
  let dir: string;
  let projectRoot: string;
  const streams: SseClient[] = [];

  async function ui(method: string, url: string, body?: unknown): Promise<{ status: number; json: any }> {
    const headers: Record<string, string> = { ...UI };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(api.base + url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined };
  }
  async function sse(url: string): Promise<SseClient> {
    const client = await openSse(api.base + url); // EventSource cannot send X-Conductor-Client
    expect(client.status).toBe(200);
    expect(client.headers.get('content-type')).toMatch(/^text\/event-stream/);
    streams.push(client);
    return client;
  }
  const taskUrl = `/api/projects/${P}/tasks/${T}`;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'upstream-ui-contract-'));
    projectRoot = path.join(dir, 'workspace');
    fs.mkdirSync(path.join(dir, 'runs'));
    fs.mkdirSync(projectRoot);
    const configPath = path.join(dir, 'config.yaml');
    fs.writeFileSync(configPath, `agents:\n  uiagent:\n    type: command\n    command: ${UI_AGENT}\n`);
    api = await listenApiApp({ root: path.join(dir, 'runs'), config: loadConfig(configPath, { strict: false }) });
  });

  afterAll(async () => {
    streams.forEach((s) => s.close());
    await fetch(`${api.base}/api/v1/tasks/${T}?project_id=${P}`, { method: 'DELETE' }).catch(() => undefined);
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves the whole dashboard flow: projects, task tree, run, live log, message bus, stop and resume', async () => {
    // App start: #4 version, #23 home dirs, #21 projects.
    const version = await ui('GET', '/api/v1/version');
    expect(version.status).toBe(200);
    expect(typeof version.json.version).toBe('string');
    const homeDirs = await ui('GET', '/api/projects/home-dirs');
    expect(homeDirs).toEqual({ status: 200, json: { dirs: [] } });

    // "New Project" dialog: #22, then the list shows it (#21).
    const created = await ui('POST', '/api/projects', { project_id: P, project_root: projectRoot });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ id: P, task_count: 0, project_root: projectRoot });
    expect(created.json.last_activity).toMatch(TIME);
    const projects = await ui('GET', '/api/projects');
    expect(projects.json.projects).toEqual([{ id: P, last_activity: expect.stringMatching(TIME), task_count: 0, project_root: projectRoot }]);
    expect((await ui('GET', '/api/projects/home-dirs')).json.dirs).toEqual([projectRoot]);

    // With a project selected the UI listens on #8 for `status`/`log` of any run.
    const all = await sse('/api/v1/runs/stream/all');

    // "New Task" dialog: #10 with the UI's payload (project_id injected by the client).
    const start = await ui('POST', '/api/v1/tasks', { task_id: T, prompt: 'Say hello', project_root: projectRoot, attach_mode: 'create', agent_type: 'uiagent', project_id: P });
    expect(start.status).toBe(201);
    expect(start.json).toMatchObject({ task_id: T, status: expect.any(String), run_id: expect.any(String) });
    const runId: string = start.json.run_id;

    // Tree: #27 is polled with active_only (and the selected task) until the run shows.
    const flatUrls = [`/api/projects/${P}/runs/flat?active_only=1`, `/api/projects/${P}/runs/flat?active_only=1&selected_task_id=${T}&selected_task_limit=1`];
    for (const url of flatUrls) {
      const flat = await waitUntil(async () => {
        const res = await ui('GET', url);
        return res.json.runs.find((r: { id: string; status: string }) => r.id === runId && r.status === 'running') ? res : undefined;
      });
      const run = flat.json.runs.find((r: { id: string }) => r.id === runId);
      expect(run).toMatchObject({ id: runId, task_id: T, agent: expect.any(String), status: 'running', exit_code: -1 });
      expect(run.start_time).toMatch(TIME);
    }

    // The tree pages #32 with limit=500.
    const tasks = await ui('GET', `/api/projects/${P}/tasks?limit=500&offset=0`);
    expect(tasks.json).toMatchObject({ total: 1, limit: 500, offset: 0, has_more: false });
    const item = tasks.json.items[0];
    expect(item).toMatchObject({ id: T, project_id: P, done: false, run_count: 1 });
    expect(item.last_activity).toMatch(TIME);
    expect(typeof item.status).toBe('string');
    expect(typeof item.run_counts).toBe('object');
    for (const key of ['depends_on', 'blocked_by'] as const) expect(item[key] === null || Array.isArray(item[key])).toBe(true);

    // Selecting the task: #33 (include_files default), #36 TASK.md, #41 live logs, #39 task bus.
    const detail = await ui('GET', taskUrl);
    expect(detail.json).toMatchObject({ id: T, project_id: P, done: false, state: expect.any(String), status: expect.any(String) });
    expect(detail.json.created_at).toMatch(TIME);
    expect(detail.json.last_activity).toMatch(TIME);
    expect(detail.json.runs).toEqual([expect.objectContaining({ id: runId, agent: expect.any(String), status: 'running', exit_code: -1, files: expect.any(Array) })]);
    const taskFile = await ui('GET', `${taskUrl}/file?name=TASK.md`);
    expect(taskFile.json).toMatchObject({ name: 'TASK.md', content: 'Say hello\n', size_bytes: 10 });
    expect(taskFile.json.modified).toMatch(TIME);

    const taskLogs = await sse(`${taskUrl}/runs/stream`);
    await taskLogs.waitFor((ev) => named(ev, 'log').some((l) => /hello from attempt 1/.test(l.line)));
    const log = taskLogs.events.find((e) => e.event === 'log')!;
    expect(log.id).toMatch(/^\S+$/); // the live panel dedupes on run id + stream + lastEventId
    expect(JSON.parse(log.data)).toMatchObject({ run_id: runId, stream: 'stdout', line: expect.any(String) });
    await all.waitFor((ev) => named(ev, 'status').some((s) => s.run_id === runId && s.status === 'running'));
    await all.waitFor((ev) => named(ev, 'log').some((l) => l.run_id === runId));

    // Opening the run: #42 (the Stop button reads run_id), #45 with tail=1500, #46 raw tail.
    const run = await ui('GET', `${taskUrl}/runs/${runId}`);
    expect(run.json).toMatchObject({ id: runId, run_id: runId, project_id: P, task_id: T, status: 'running', exit_code: -1, pid: expect.any(Number), pgid: expect.any(Number) });
    expect(run.json.start_time).toMatch(TIME);
    expect(run.json.files).toContainEqual({ name: 'stdout', label: 'stdout', size: expect.any(Number) });
    const stdout = await ui('GET', `${taskUrl}/runs/${runId}/file?name=stdout&tail=1500`);
    expect(stdout.json).toMatchObject({ name: 'stdout', content: expect.stringContaining('"type":"system"'), size_bytes: expect.any(Number) });
    expect(stdout.json.modified).toMatch(TIME);
    const raw = await sse(`${taskUrl}/runs/${runId}/stream?name=stdout`);
    await raw.waitFor((ev) => ev.some((e) => e.event === undefined && e.data.includes('hello from attempt 1')));

    // Message bus panel: #37 list (limit=500), #39 stream, #38 post, #29/#30/#31 for the project.
    for (const scope of [taskUrl, `/api/projects/${P}`]) {
      const stream = await sse(`${scope}/messages/stream`);
      const posted = await ui('POST', `${scope}/messages`, { type: 'USER', body: `hi from ${scope}` });
      expect(posted.status).toBe(201);
      expect(posted.json).toEqual({ msg_id: expect.stringMatching(/^MSG-/), timestamp: expect.stringMatching(TIME) });
      await stream.waitFor((ev) => named(ev, 'message').some((m) => m.msg_id === posted.json.msg_id));
      const streamed = stream.events.find((e) => e.event === 'message' && e.id === posted.json.msg_id)!;
      expect(JSON.parse(streamed.data)).toMatchObject({ msg_id: posted.json.msg_id, type: 'USER', body: `hi from ${scope}`, timestamp: expect.stringMatching(TIME) });

      const listed = await ui('GET', `${scope}/messages?limit=500`);
      const mine = listed.json.messages.find((m: { msg_id: string }) => m.msg_id === posted.json.msg_id);
      expect(mine).toMatchObject({ type: 'USER', body: `hi from ${scope}`, timestamp: expect.stringMatching(TIME) });
      const since = await ui('GET', `${scope}/messages?limit=500&since=${posted.json.msg_id}`);
      expect(since.status).toBe(200);
      expect(since.json.messages.map((m: { msg_id: string }) => m.msg_id)).not.toContain(posted.json.msg_id);
      // A cursor the bus no longer has: the UI retries without `since` when it sees this message.
      const lost = await ui('GET', `${scope}/messages?limit=500&since=MSG-19990101-000000-000000000-PID00001-0001`);
      expect(lost.status).toBe(404);
      expect(lost.json.error.message).toContain('message id not found');
    }

    // Stop button: #44; the raw tail ends with `done`, #41 reports run_end, #8 the final status.
    const stop = await ui('POST', `${taskUrl}/runs/${runId}/stop`);
    expect(stop).toEqual({ status: 202, json: { run_id: runId, message: 'SIGTERM sent' } });
    await raw.waitFor((ev) => ev.some((e) => e.event === 'done'));
    expect(raw.events.find((e) => e.event === 'done')!.data).toBe('run failed');
    await taskLogs.waitFor((ev) => named(ev, 'run_end').some((e) => e.run_id === runId));
    expect(named(taskLogs.events, 'run_end').find((e) => e.run_id === runId)).toMatchObject({ status: 'failed', exit_code: expect.any(Number) });
    await all.waitFor((ev) => named(ev, 'status').some((s) => s.run_id === runId && s.status === 'failed'));

    // Resume: #35 clears DONE; starting again with attach_mode resume runs the next attempt (#41 run_start).
    fs.writeFileSync(path.join(api.root, P, T, 'DONE'), '');
    expect(await ui('POST', `${taskUrl}/resume`)).toEqual({ status: 200, json: { project_id: P, task_id: T, resumed: true } });
    expect(fs.existsSync(path.join(api.root, P, T, 'DONE'))).toBe(false);
    fs.writeFileSync(path.join(api.root, P, T, 'FINISH'), '');
    const again = await ui('POST', '/api/v1/tasks', { task_id: T, prompt: 'Say hello', project_root: projectRoot, attach_mode: 'resume', agent_type: 'uiagent', project_id: P });
    expect(again.status).toBe(201);
    await taskLogs.waitFor((ev) => named(ev, 'run_start').some((e) => e.run_id === again.json.run_id));
    expect(named(taskLogs.events, 'run_start').find((e) => e.run_id === again.json.run_id)).toMatchObject({ agent: expect.any(String), start_time: expect.stringMatching(TIME) });
    const finished = await waitUntil(async () => ((await ui('GET', taskUrl)).json.done ? (await ui('GET', taskUrl)).json : undefined));
    expect(finished.runs.map((r: { id: string }) => r.id)).toEqual([runId, again.json.run_id]);
  });

  it('serves a custom UI build from CONDUCTOR_UI_DIR (how upstream\'s dashboard is served unmodified)', async () => {
    const uiDir = path.join(dir, 'custom-ui');
    fs.mkdirSync(path.join(uiDir, 'assets'), { recursive: true });
    fs.writeFileSync(path.join(uiDir, 'index.html'), '<!doctype html><title>custom build</title><script src="/assets/app.js"></script>');
    fs.writeFileSync(path.join(uiDir, 'assets', 'app.js'), 'console.log("custom")');
    const saved = process.env.CONDUCTOR_UI_DIR;
    process.env.CONDUCTOR_UI_DIR = uiDir;
    let custom: TestApi & { base: string };
    try {
      custom = await listenApiApp({ root: api.root });
    } finally {
      if (saved === undefined) delete process.env.CONDUCTOR_UI_DIR;
      else process.env.CONDUCTOR_UI_DIR = saved;
    }
    try {
      for (const url of ['/', '/ui/']) expect(await (await fetch(custom.base + url)).text()).toContain('<title>custom build</title>');
      const asset = await fetch(custom.base + '/assets/app.js');
      expect(asset.headers.get('content-type')).toMatch(/javascript/);
      expect(await asset.text()).toBe('console.log("custom")');
      expect((await fetch(custom.base + '/api/v1/version')).status).toBe(200);
    } finally {
      await custom.close();
    }
  });
});
