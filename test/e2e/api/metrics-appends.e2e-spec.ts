/**
 * Issue #12 item 3: conductor_messagebus_appends_total counts every append the server can see
 * (its own BusWriters, whoever calls them, and other processes' appends on the bus files its
 * tails watch), each message once.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BusWriter, readMessages } from '@app/messagebus';
import { listenApiApp, openSse, TestApi, waitUntil } from '../../utils/api-app';
import { requireBuild, runAgentBin } from '../cli/bus-helpers';

const TASK = 'task-20260101-120000-loop';

describe('conductor_messagebus_appends_total', () => {
  let api: TestApi & { base: string };
  beforeAll(async () => {
    requireBuild();
    api = await listenApiApp();
  });
  afterAll(async () => api.close());

  const appends = async (): Promise<number> => {
    const text = await (await fetch(`${api.base}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('conductor_messagebus_appends_total '));
    return Number(line?.split(' ')[1] ?? 0);
  };
  const cliPost = (project: string, task: string | undefined, body: string) => {
    const args = ['bus', 'post', '--root', api.root, '--project', project, ...(task ? ['--task', task] : []), '--body', body];
    const r = spawnSync(runAgentBin, args, { encoding: 'utf8', env: { ...process.env, HOME: api.dir } });
    expect([r.status, r.stderr]).toEqual([0, '']);
  };

  it('counts own writers and watched foreign appends, each message once', async () => {
    fs.mkdirSync(path.join(api.root, 'c', TASK), { recursive: true });
    const before = await appends();
    const stream = await openSse(`${api.base}/api/projects/c/messages/stream`);

    // 1: through the API (its writer is also seen again by the project-bus tail: counted once)
    const res = await fetch(`${api.base}/api/projects/c/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ body: 'via api' }) });
    expect(res.status).toBe(201);
    // 2: a BusWriter of the server process on a bus nobody watches (what its task loops do)
    await new BusWriter(path.join(api.root, 'c', TASK, 'TASK-MESSAGE-BUS.md')).append({ type: 'PROGRESS', project_id: 'c', task_id: TASK, run_id: 'r', body: 'loop' });
    // 3: another process appending to the watched project bus
    cliPost('c', undefined, 'from another process');
    // not seen: another process appending to a bus the server does not watch
    cliPost('c', TASK, 'unseen');

    await stream.waitFor((ev) => ev.filter((e) => e.event === 'message').length === 2);
    stream.close();
    await waitUntil(async () => (await appends()) - before >= 3);
    expect((await appends()) - before).toBe(3);
    expect(readMessages(path.join(api.root, 'c', 'PROJECT-MESSAGE-BUS.md'))).toHaveLength(2);
  }, 30000);
});
