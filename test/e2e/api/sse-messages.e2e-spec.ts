import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { BusWriter } from '@app/messagebus';
import { BusHub } from '@app/streams';
import { listenApiApp, openSse, SseEvent, TestApi, waitUntil } from '../../utils/api-app';

const P = 'msgs';
const T = 'task-20260101-120000-msgs';
const RUN_AGENT = path.join(__dirname, '..', '..', '..', 'bin', 'run-agent');

/** Posts through `run-agent bus post` in a separate process (the CLI shares only the files with the server). */
async function postFromOtherProcess(root: string, body: string, task?: string): Promise<string> {
  const args = ['bus', 'post', '--root', root, '--project', P, '--type', 'FACT', '--body', body, ...(task ? ['--task', task] : [])];
  const { stdout } = await promisify(execFile)(RUN_AGENT, args, { env: { ...process.env, HOME: root } });
  return /msg_id: (\S+)/.exec(stdout)![1];
}

const bodies = (events: SseEvent[]) => events.filter((e) => e.event === 'message').map((e) => JSON.parse(e.data).body);

describe('SSE message streams (#20, #31, #39)', () => {
  let api: TestApi & { base: string };
  const ids: string[] = [];
  const url = (p: string) => `${api.base}${p}`;

  beforeAll(async () => {
    api = await listenApiApp({ sse: { heartbeatIntervalMs: 300, pollIntervalMs: 50, discoveryIntervalMs: 50, maxClientsPerRun: 10 } });
    fs.mkdirSync(path.join(api.root, P, T), { recursive: true });
    const bus = new BusWriter(path.join(api.root, P, 'PROJECT-MESSAGE-BUS.md'));
    for (let i = 1; i <= 25; i++) ids.push((await bus.append({ type: 'INFO', project_id: P, task_id: '', run_id: '', body: `m${i}` })).msg_id);
  });
  afterAll(async () => api.close());

  it('hydrates the last 20, then streams messages posted by another process, and resumes after Last-Event-ID', async () => {
    const first = await openSse(url(`/api/projects/${P}/messages/stream`));
    const v1 = await openSse(url(`/api/v1/messages/stream?project_id=${P}`));
    for (const c of [first, v1]) await c.waitFor((ev) => bodies(ev).length === 20);
    expect(bodies(first.events)).toEqual(Array.from({ length: 20 }, (_, i) => `m${i + 6}`));
    const msg = first.events.find((e) => e.event === 'message')!;
    expect(msg.id).toBe(ids[5]);
    expect(JSON.parse(msg.data)).toEqual({ msg_id: ids[5], timestamp: expect.any(String), type: 'INFO', project_id: P, body: 'm6' });
    expect(api.app.get(BusHub).tailCount).toBe(1); // both clients share one tail of the bus file

    const posted = await postFromOtherProcess(api.root, 'from the cli');
    for (const c of [first, v1]) await c.waitFor((ev) => bodies(ev).includes('from the cli'));
    expect(first.events.filter((e) => e.event === 'message').pop()!.id).toBe(posted);

    // heartbeats are named events with {} and no id
    await first.waitFor((ev) => ev.some((e) => e.event === 'heartbeat'));
    const hb = first.events.find((e) => e.event === 'heartbeat')!;
    expect(hb).toEqual({ event: 'heartbeat', data: '{}' });

    const lastSeen = first.events.filter((e) => e.event === 'message').pop()!.id!;
    first.close();
    const missed1 = await postFromOtherProcess(api.root, 'missed 1');
    await new BusWriter(path.join(api.root, P, 'PROJECT-MESSAGE-BUS.md')).append({ type: 'INFO', project_id: P, task_id: '', run_id: '', body: 'missed 2' });
    await v1.waitFor((ev) => bodies(ev).includes('missed 2'));

    const resumed = await openSse(url(`/api/projects/${P}/messages/stream`), { 'Last-Event-ID': lastSeen });
    await resumed.waitFor((ev) => bodies(ev).length >= 2);
    expect(bodies(resumed.events)).toEqual(['missed 1', 'missed 2']);
    expect(resumed.events.find((e) => e.event === 'message')!.id).toBe(missed1);
    await postFromOtherProcess(api.root, 'live again');
    await resumed.waitFor((ev) => bodies(ev).includes('live again'));
    expect(bodies(resumed.events)).toEqual(['missed 1', 'missed 2', 'live again']);

    // D15: the v1 stream resumes from Last-Event-ID too
    const resumedV1 = await openSse(url(`/api/v1/messages/stream?project_id=${P}`), { 'Last-Event-ID': missed1 });
    await resumedV1.waitFor((ev) => bodies(ev).length >= 2);
    expect(bodies(resumedV1.events)).toEqual(['missed 2', 'live again']);
    resumedV1.close();

    // an id that no longer exists re-hydrates the last 20
    const lost = await openSse(url(`/api/projects/${P}/messages/stream`), { 'Last-Event-ID': 'MSG-19990101-000000-000000000-PID00001-0001' });
    await lost.waitFor((ev) => bodies(ev).length === 20);
    expect(bodies(lost.events).slice(-3)).toEqual(['missed 1', 'missed 2', 'live again']);
    for (const c of [v1, resumed, lost]) c.close();
    await waitUntil(() => api.app.get(BusHub).tailCount === 0); // the shared tail goes with its last client
  });

  it('streams a task bus (#39 and #20 with task_id), also before the bus file exists', async () => {
    const task = await openSse(url(`/api/projects/${P}/tasks/${T}/messages/stream`));
    const v1 = await openSse(url(`/api/v1/messages/stream?project_id=${P}&task_id=${T}`));
    await postFromOtherProcess(api.root, 'task note', T);
    for (const c of [task, v1]) {
      await c.waitFor((ev) => bodies(ev).includes('task note'));
      expect(bodies(c.events)).toEqual(['task note']);
    }
    task.close();
    v1.close();
  });

  it('refuses bad ids before streaming', async () => {
    const res = await fetch(url('/api/v1/messages/stream'));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: 'BAD_REQUEST', message: 'project_id is required' } });
  });
});
