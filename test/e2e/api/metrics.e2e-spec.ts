import * as fs from 'node:fs';
import * as path from 'node:path';
import { BusWriter } from '@app/messagebus';
import { createApiApp, listenApiApp, openSse, TestApi, waitUntil } from '../../utils/api-app';
import { killGroup, runningFields, seedRun, spawnSleeper } from '../../utils/run-fixtures';

type Samples = Map<string, number>;

/** Parses Prometheus text exposition; throws on any malformed line. Keys: `name{labels}` as printed. */
function parseProm(text: string): { samples: Samples; types: Map<string, string> } {
  const samples: Samples = new Map();
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE (\w+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1], type[2]);
      continue;
    }
    if (/^# HELP \w+ .*$/.test(line)) continue;
    const sample = /^(\w+(?:\{(?:\w+="(?:[^"\\]|\\.)*",?)*\})?) (-?[\d.e+-]+|NaN|[+-]Inf)$/.exec(line);
    if (!sample) throw new Error(`bad metrics line: ${line}`);
    samples.set(sample[1], Number(sample[2]));
  }
  return { samples, types };
}

describe('/metrics', () => {
  let api: TestApi & { base: string };
  const scrape = async () => {
    const res = await fetch(`${api.base}/metrics`);
    expect(res.headers.get('content-type')).toContain('text/plain');
    return parseProm(await res.text()).samples;
  };
  const get = (s: Samples, key: string) => s.get(key) ?? 0;
  const post = (url: string, body: object) => fetch(`${api.base}${url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  beforeAll(async () => {
    api = await listenApiApp();
  });
  afterAll(async () => api.close());

  it('parses as Prometheus text with every conductor metric declared', async () => {
    const res = await fetch(`${api.base}/metrics`);
    const { types } = parseProm(await res.text());
    expect(Object.fromEntries([...types].filter(([n]) => n.startsWith('conductor_')))).toEqual({
      conductor_uptime_seconds: 'gauge',
      conductor_active_runs: 'gauge',
      conductor_active_runs_total: 'gauge',
      conductor_completed_runs_total: 'counter',
      conductor_failed_runs_total: 'counter',
      conductor_messagebus_appends_total: 'counter',
      conductor_queued_runs: 'gauge',
      conductor_queued_runs_total: 'gauge',
      conductor_api_requests_total: 'counter',
      conductor_agent_runs_total: 'counter',
      conductor_agent_fallbacks_total: 'counter',
      conductor_tasks_needs_input: 'gauge',
      conductor_agent_tokens_total: 'counter',
      conductor_agent_cost_usd_total: 'counter',
    });
  });

  it('moves the request, bus, run and gauge metrics', async () => {
    const before = await scrape();
    expect(get(before, 'conductor_uptime_seconds')).toBeGreaterThan(0);
    await fetch(`${api.base}/api/projects`);
    await fetch(`${api.base}/api/projects/none/tasks/task-20990101-000000-x/file`);

    // bus appends: one through the API, one by another writer seen by a shared bus tail
    const stream = await openSse(`${api.base}/api/projects/m/messages/stream`);
    expect((await post('/api/projects/m/messages', { body: 'via api' })).status).toBe(201);
    await new BusWriter(path.join(api.root, 'm', 'PROJECT-MESSAGE-BUS.md')).append({ type: 'INFO', project_id: 'm', task_id: '', run_id: '', body: 'from elsewhere' });
    await stream.waitFor((ev) => ev.filter((e) => e.event === 'message').length === 2);
    stream.close();

    // a running run on disk (not started by this server) moves the active gauge
    const sleeper = spawnSleeper();
    seedRun(api.root, 'm', 'task-20260101-120000-ext', '20260101-1200000000-9-1', runningFields(sleeper));
    // a failed run followed by a retry with another agent is a fallback
    seedRun(api.root, 'm', 'task-20260101-120000-fb', '20260101-1200000000-9-2', { agent: 'claude', status: 'failed', exit_code: 1 });
    seedRun(api.root, 'm', 'task-20260101-120000-fb', '20260101-1200000000-9-3', { agent: 'codex', previous_run_id: '20260101-1200000000-9-2' });

    // a task that fails once and then completes: one failed and two completed agent runs overall
    const t = 'task-20260101-120000-metrics';
    const created = await post('/api/v1/tasks', { project_id: 'm', task_id: t, agent_type: 'fake', prompt: 'x', config: { FAKE_AGENT_EXIT_SEQUENCE: '1,0', FAKE_AGENT_DONE_ON_ATTEMPT: '2' } });
    expect(created.status).toBe(201);
    await waitUntil(() => fs.existsSync(path.join(api.root, 'm', t, 'DONE')), 30000);
    await waitUntil(async () => {
      const res = await fetch(`${api.base}/api/projects/m/tasks/${t}`);
      const d = (await res.json()) as { runs: { status: string }[] };
      return d.runs.length === 2 && d.runs.every((r) => r.status !== 'running');
    }, 30000);

    // a run of another process waiting for a max_concurrent_runs slot (D13) counts as queued
    fs.mkdirSync(path.join(api.root, '.conductor', 'queue'), { recursive: true });
    fs.writeFileSync(path.join(api.root, '.conductor', 'queue', '20260101-1200000000-9-9'), `${sleeper.pid}\n`);

    const after = await scrape();
    killGroup(sleeper);
    expect(get(after, 'conductor_queued_runs')).toBe(1);
    expect(get(after, 'conductor_queued_runs_total')).toBe(1); // deprecated alias, same value
    expect(get(after, 'conductor_api_requests_total{method="GET",status="200"}')).toBeGreaterThan(get(before, 'conductor_api_requests_total{method="GET",status="200"}'));
    expect(get(after, 'conductor_api_requests_total{method="GET",status="404"}')).toBeGreaterThan(get(before, 'conductor_api_requests_total{method="GET",status="404"}'));
    expect(get(after, 'conductor_api_requests_total{method="POST",status="201"}') - get(before, 'conductor_api_requests_total{method="POST",status="201"}')).toBe(2);
    expect(get(after, 'conductor_messagebus_appends_total') - get(before, 'conductor_messagebus_appends_total')).toBeGreaterThanOrEqual(2);
    expect(get(after, 'conductor_active_runs')).toBe(1);
    expect(get(after, 'conductor_active_runs_total')).toBe(1); // deprecated alias, same value
    expect(get(after, 'conductor_failed_runs_total') - get(before, 'conductor_failed_runs_total')).toBe(2);
    expect(get(after, 'conductor_completed_runs_total') - get(before, 'conductor_completed_runs_total')).toBe(2);
    expect(get(after, 'conductor_agent_runs_total{agent_type="command"}') - get(before, 'conductor_agent_runs_total{agent_type="command"}')).toBe(2);
    expect(get(after, 'conductor_agent_fallbacks_total{from_type="claude",to_type="codex"}') - get(before, 'conductor_agent_fallbacks_total{from_type="claude",to_type="codex"}')).toBe(1);
  }, 60000);

  it('shows queued root tasks while the planner has no free slot', async () => {
    const main = api;
    api = await listenApiApp({ extraYaml: '  max_concurrent_root_tasks: 1' });
    try {
      await queued();
    } finally {
      await api.close();
      api = main;
    }
  });

  async function queued() {
    const mk = (t: string) => post('/api/v1/tasks', { project_id: 'q', task_id: t, agent_type: 'fake', prompt: 'x', config: { FAKE_AGENT_SLEEP_MS: '60000' } });
    const first = (await (await mk('task-20260101-120000-queue1')).json()) as { status: string };
    const second = await (await mk('task-20260101-120000-queue2')).json();
    expect(first.status).toBe('started');
    expect(second).toMatchObject({ status: 'queued', queue_position: 1 });
    expect(get(await scrape(), 'conductor_queued_runs')).toBe(1);
    const detail = (await (await fetch(`${api.base}/api/projects/q/tasks/task-20260101-120000-queue2`)).json()) as { status: string; queue_position: number };
    expect(detail).toMatchObject({ status: 'queued', state: 'queued', queue_position: 1 });
    await fetch(`${api.base}/api/v1/tasks/task-20260101-120000-queue2?project_id=q`, { method: 'DELETE' });
    expect(get(await scrape(), 'conductor_queued_runs')).toBe(0);
    await fetch(`${api.base}/api/v1/tasks/task-20260101-120000-queue1?project_id=q`, { method: 'DELETE' });
    await waitUntil(async () => {
      const d = (await (await fetch(`${api.base}/api/projects/q/tasks/task-20260101-120000-queue1`)).json()) as { runs: { status: string }[] };
      return d.runs.length > 0 && d.runs.every((r) => r.status !== 'running');
    });
  }

  it('registers the process metrics when enabled', async () => {
    const other = await createApiApp({ defaultMetrics: true });
    try {
      const text = (await other.app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(text).toContain('process_cpu_user_seconds_total');
    } finally {
      await other.close();
    }
  });
});
