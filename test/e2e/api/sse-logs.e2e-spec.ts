import { execFileSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { updateRunInfo } from '@app/storage';
import { RunLogHub } from '@app/streams';
import { listenApiApp, openSse, SseEvent, TestApi, waitUntil } from '../../utils/api-app';
import { killGroup, runningFields, seedRun, spawnSleeper } from '../../utils/run-fixtures';

const P = 'logs';
const T = 'task-20260101-120000-logs';
const R = '20260101-1200000000-200-1';
const R2 = '20260101-1300000000-200-2';

/** Appends lines from a separate process, as an agent writing its output would. */
function agentAppends(file: string, ...lines: string[]): void {
  execFileSync('sh', ['-c', 'for l in "$@"; do printf "%s\\n" "$l" >> "$0"; done', file, ...lines]);
}

const logLines = (events: SseEvent[], run = R) =>
  events.filter((e) => e.event === 'log').map((e) => JSON.parse(e.data)).filter((d) => d.run_id === run).map((d) => `${d.stream}:${d.line}`);

describe('SSE log streams (#8, #17, #41, #46)', () => {
  let api: TestApi & { base: string };
  let sleeper: ChildProcess;
  let runDir: string;
  const url = (p: string) => `${api.base}${p}`;

  beforeAll(async () => {
    api = await listenApiApp({ sse: { maxClientsPerRun: 4, heartbeatIntervalMs: 60000, pollIntervalMs: 50, discoveryIntervalMs: 50 } });
    sleeper = spawnSleeper();
    runDir = seedRun(api.root, P, T, R, runningFields(sleeper));
  });
  afterAll(async () => {
    killGroup(sleeper);
    await api.close();
  });

  it('streams appended lines to every log stream through one shared tailer, and resumes after Last-Event-ID', async () => {
    const single = await openSse(url(`/api/v1/runs/${R}/stream`));
    const task = await openSse(url(`/api/projects/${P}/tasks/${T}/runs/stream`));
    const all = await openSse(url('/api/v1/runs/stream/all'));
    const raw = await openSse(url(`/api/projects/${P}/tasks/${T}/runs/${R}/stream?name=stdout`));
    expect(single.status).toBe(200);
    expect(single.headers.get('content-type')).toContain('text/event-stream');
    await single.waitFor((ev) => ev.some((e) => e.event === 'status'));
    const status = single.events.find((e) => e.event === 'status')!;
    expect(JSON.parse(status.data)).toEqual({ run_id: R, project_id: P, task_id: T, status: 'running', exit_code: -1 });
    expect(status.id).toBeUndefined();

    agentAppends(path.join(runDir, 'agent-stdout.txt'), 'alpha 1');
    for (const c of [single, task, all]) await c.waitFor((ev) => logLines(ev).includes('stdout:alpha 1'));
    await raw.waitFor((ev) => ev.some((e) => e.event === undefined && e.data.includes('alpha 1')));
    expect(single.events.find((e) => e.event === 'log')!.id).toBe('s=1;e=0');
    expect(task.events.find((e) => e.event === 'log')!.id).toBe(`${R}:s=1;e=0`);
    expect(all.events.find((e) => e.event === 'log')!.id).toBe(`${R}:s=1;e=0`);
    const hub = api.app.get(RunLogHub);
    expect(hub.clientCount(R)).toBe(3);
    expect(hub.files.size).toBe(2); // agent-stdout.txt + agent-stderr.txt, shared by all four clients

    const lastSingle = single.events.filter((e) => e.event === 'log').pop()!.id!;
    const lastTask = task.events.filter((e) => e.event === 'log').pop()!.id!;
    single.close();
    task.close();
    await waitUntil(() => hub.clientCount(R) === 1);
    agentAppends(path.join(runDir, 'agent-stdout.txt'), 'alpha 2', 'alpha 3');
    agentAppends(path.join(runDir, 'agent-stderr.txt'), 'oops 1');
    await all.waitFor((ev) => logLines(ev).includes('stderr:oops 1'));

    const resumed = await openSse(url(`/api/v1/runs/${R}/stream`), { 'Last-Event-ID': lastSingle });
    const resumedTask = await openSse(url(`/api/projects/${P}/tasks/${T}/runs/stream`), { 'Last-Event-ID': lastTask });
    for (const c of [resumed, resumedTask]) {
      await c.waitFor((ev) => logLines(ev).length >= 3);
      expect(logLines(c.events)).toEqual(['stdout:alpha 2', 'stdout:alpha 3', 'stderr:oops 1']);
    }
    expect(resumed.events.filter((e) => e.event === 'log').map((e) => e.id)).toEqual(['s=2;e=0', 's=3;e=0', 's=3;e=1']);
    const resumedAll = await openSse(url('/api/v1/runs/stream/all'), { 'Last-Event-ID': lastTask });
    await resumedAll.waitFor((ev) => logLines(ev).length >= 3);
    expect(logLines(resumedAll.events)).toEqual(['stdout:alpha 2', 'stdout:alpha 3', 'stderr:oops 1']);
    expect(resumedAll.events.filter((e) => e.event === 'log').pop()!.id).toBe(`${R}:s=3;e=1`);
    resumedAll.close();
    await waitUntil(() => hub.clientCount(R) === 3);
    agentAppends(path.join(runDir, 'agent-stdout.txt'), 'alpha 4');
    await resumed.waitFor((ev) => logLines(ev).includes('stdout:alpha 4'));
    expect(logLines(resumed.events)).toEqual(['stdout:alpha 2', 'stdout:alpha 3', 'stderr:oops 1', 'stdout:alpha 4']);
    expect(resumed.events.filter((e) => e.event === 'log').pop()!.id).toBe('s=4;e=1');

    // a reconnect without Last-Event-ID is live only
    const fresh = await openSse(url(`/api/v1/runs/${R}/stream`));
    await fresh.waitFor((ev) => ev.some((e) => e.event === 'status'));
    expect(logLines(fresh.events)).toEqual([]);

    // the limit is per run (4 here: all, resumed, resumedTask, fresh): the 5th subscriber gets 429
    const over = await openSse(url(`/api/v1/runs/${R}/stream`));
    expect(over.status).toBe(429);
    fresh.close();

    // a new run of the task is discovered by the fan-in streams (run_start on #41)
    const r2Dir = seedRun(api.root, P, T, R2, runningFields(sleeper));
    await resumedTask.waitFor((ev) => ev.some((e) => e.event === 'run_start' && JSON.parse(e.data).run_id === R2));
    await all.waitFor((ev) => ev.some((e) => e.event === 'status' && JSON.parse(e.data).run_id === R2));
    agentAppends(path.join(r2Dir, 'agent-stdout.txt'), 'second run');
    await resumedTask.waitFor((ev) => logLines(ev, R2).includes('stdout:second run'));
    const fanInId = resumedTask.events.filter((e) => e.event === 'log').pop()!.id!;
    expect(fanInId.split('/').sort()).toEqual([`${R}:s=4;e=1`, `${R2}:s=1;e=0`]);

    // the run ends: status + run_end on the fan-in stream, done on the raw tail
    await updateRunInfo(path.join(runDir, 'run-info.yaml'), (i) => {
      i.status = 'completed';
      i.exit_code = 0;
      i.end_time = new Date();
    });
    await resumedTask.waitFor((ev) => ev.some((e) => e.event === 'run_end' && JSON.parse(e.data).run_id === R));
    const runEnd = JSON.parse(resumedTask.events.find((e) => e.event === 'run_end')!.data);
    expect(runEnd).toMatchObject({ run_id: R, status: 'completed', exit_code: 0, agent: 'fake', end_time: expect.stringMatching(/^20\d\d-/) });
    const runStart = JSON.parse(resumedTask.events.find((e) => e.event === 'run_start')!.data);
    expect(runStart).toMatchObject({ run_id: R2, agent: 'fake', start_time: expect.stringMatching(/^20\d\d-/) });
    await resumed.waitFor((ev) => ev.some((e) => e.event === 'status' && JSON.parse(e.data).status === 'completed'));
    await raw.waitFor((ev) => ev.some((e) => e.event === 'done'));
    expect(raw.events.filter((e) => e.event === 'done').map((e) => e.data)).toEqual(['run completed']);
    const rawText = raw.events.filter((e) => e.event === undefined).map((e) => e.data).join('');
    expect(rawText.replace(/\n/g, '')).toBe('alpha 1alpha 2alpha 3alpha 4');
    await raw.ended;
    for (const c of [resumed, resumedTask, all]) c.close();

    // finished runs hold no tailer on fan-in streams, yet a resume still gets their missed lines
    await waitUntil(() => hub.clientCount(R) === 0);
    const late = await openSse(url(`/api/projects/${P}/tasks/${T}/runs/stream`), { 'Last-Event-ID': `${R}:s=2;e=0` });
    await late.waitFor((ev) => logLines(ev).length >= 3);
    expect(logLines(late.events)).toEqual(['stdout:alpha 3', 'stdout:alpha 4', 'stderr:oops 1']);
    expect(late.events.filter((e) => e.event === 'status').map((e) => JSON.parse(e.data).status)).toContain('completed');
    expect(hub.clientCount(R)).toBe(0);
    late.close();
    await waitUntil(() => hub.activeRuns === 0 && hub.files.size === 0); // tailers go with their last client
  });

  it('resumes the raw file tail (#46) after Last-Event-ID = the byte offset it has', async () => {
    const R3 = '20260101-1200030000-1-3';
    const dir = seedRun(api.root, P, T, R3, runningFields(sleeper));
    const stdout = path.join(dir, 'agent-stdout.txt');
    agentAppends(stdout, 'one');
    const rawUrl = url(`/api/projects/${P}/tasks/${T}/runs/${R3}/stream?name=stdout`);
    const first = await openSse(rawUrl);
    await first.waitFor((ev) => ev.some((e) => e.event === undefined && e.data.includes('one')));
    const lastId = first.events.filter((e) => e.event === undefined).pop()!.id;
    expect(lastId).toBe(String(Buffer.byteLength('one\n')));
    first.close();

    agentAppends(stdout, 'two', 'three');
    const resumed = await openSse(rawUrl, { 'Last-Event-ID': lastId! });
    await resumed.waitFor((ev) => ev.some((e) => e.event === undefined && e.data.includes('three')));
    const resumedText = resumed.events.filter((e) => e.event === undefined).map((e) => e.data).join('\n');
    expect(resumedText).toBe('two\nthree\n');
    resumed.close();

    // an id the file never reached (another file, a rotated log) starts over from byte 0
    const restart = await openSse(rawUrl, { 'Last-Event-ID': '999999' });
    await restart.waitFor((ev) => ev.some((e) => e.event === undefined && e.data.includes('three')));
    expect(restart.events.find((e) => e.event === undefined)!.data).toBe('one\ntwo\nthree\n');
    restart.close();
  });

  it('releases subscriptions of clients that leave at once, so the per-run limit never leaks', async () => {
    const r3 = '20260101-1400000000-200-3';
    seedRun(api.root, P, T, r3, runningFields(sleeper));
    const hub = api.app.get(RunLogHub);
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        const controller = new AbortController();
        const pending = fetch(url(`/api/v1/runs/${r3}/stream`), { signal: controller.signal }).catch(() => undefined);
        setImmediate(() => controller.abort());
        await pending;
      }),
    );
    await waitUntil(() => hub.clientCount(r3) === 0);
    // Clients that are registered (counted by the hub) before they leave are released too: more of
    // them in turn than the per-run limit, so one leaked subscription would make the last one fail.
    for (let i = 0; i < 12; i++) {
      const controller = new AbortController();
      const res = await fetch(url(`/api/v1/runs/${r3}/stream`), { signal: controller.signal });
      expect(res.status).toBe(200);
      expect(await waitUntil(() => hub.clientCount(r3) === 1)).toBe(true);
      controller.abort();
      await waitUntil(() => hub.clientCount(r3) === 0);
    }
    const ok = await openSse(url(`/api/v1/runs/${r3}/stream`));
    expect(ok.status).toBe(200);
    ok.close();
  });

  it('answers 404 before streaming for unknown runs and tasks without runs', async () => {
    const res = await fetch(url('/api/v1/runs/20990101-0000000000-1-1/stream'));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'run not found' } });
    const task = await fetch(url(`/api/projects/${P}/tasks/task-20990101-000000-none/runs/stream`));
    expect(task.status).toBe(404);
    expect(((await task.json()) as { error: { message: string } }).error.message).toBe('project or task not found');
  });

  it('streams the log lines of an agent launched through the API', async () => {
    const t = 'task-20260101-120000-live';
    const created = await fetch(url('/api/v1/tasks'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ project_id: P, task_id: t, agent_type: 'fake', prompt: 'count', config: { FAKE_AGENT_LINES: '4', FAKE_AGENT_LINE_INTERVAL_MS: '150', FAKE_AGENT_DONE: '1' } }),
    });
    const { run_id: runId } = (await created.json()) as { run_id: string };
    await waitUntil(() => fs.existsSync(path.join(api.root, P, t, 'runs', runId, 'run-info.yaml')));
    const stream = await openSse(url(`/api/projects/${P}/tasks/${t}/runs/stream`));
    await stream.waitFor((ev) => logLines(ev, runId).some((l) => l.includes('progress 4')));
    await stream.waitFor((ev) => ev.some((e) => e.event === 'status' && JSON.parse(e.data).status === 'completed'));
    stream.close();
  });

  it('ends open streams when the server shuts down', async () => {
    const other = await listenApiApp();
    seedRun(other.root, P, T, R, {});
    const stream = await openSse(`${other.base}/api/v1/runs/${R}/stream`);
    await stream.waitFor((ev) => ev.length > 0);
    await other.close();
    await stream.ended;
    expect(stream.events[0].event).toBe('status');
  });
});
