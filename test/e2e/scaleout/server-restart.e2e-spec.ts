import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseBus } from '@app/messagebus';
import { inflightWritesDir } from '@app/scaleout';
import { natsServerAvailable } from '../../utils/nats-server';
import { Cluster, tasksIn, waitFor } from './cluster';

// #31: the server's pending view (tasks no worker took yet) and its unconfirmed writes are kept
// under <root>/.conductor: a server SIGKILLed and restarted still lists a queued task and still
// sends a write its lost owner never confirmed to the worker that takes the task over.
// Real nats-server, conductor and worker processes.
const describeNats = natsServerAvailable() ? describe : describe.skip;

describeNats('scale-out: a server restarted with writes and tasks pending', () => {
  const c = new Cluster();
  jest.setTimeout(180_000);
  beforeAll(() => c.start(1));
  afterAll(() => c.dispose());

  const kill = async (child: import('node:child_process').ChildProcess) => {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  };
  const busBodies = (root: string, p: string, t: string) => {
    const f = join(root, p, t, 'TASK-MESSAGE-BUS.md');
    return existsSync(f) ? parseBus(readFileSync(f)).map((m) => m.body.trim()) : [];
  };

  it('loses neither the queued task nor the unconfirmed write', async () => {
    const p = 'restart-srv';
    const t = 'task-20260101-000000-owned';
    const q = 'task-20260101-000000-queued';
    await c.submit(p, t, { FAKE_AGENT_SLEEP_MS: '20000' });
    const w1 = c.workers[0];
    await waitFor('the task replicated from w1', () => existsSync(join(c.server.root, p, t, 'TASK.md')), 60_000);
    await kill(w1.child);

    // a write to the lost owner: stored in JetStream, unconfirmed (the POST ends in a 409 later)
    const body = 'posted while the owner is lost';
    const post = fetch(`${c.serverUrl}/api/v1/messages`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ project_id: p, task_id: t, type: 'USER', body }),
    }).catch(() => undefined);
    const inflight = inflightWritesDir(c.server.root);
    await waitFor('the unconfirmed write kept on disk', () => existsSync(inflight) && readdirSync(inflight).length === 1, 10_000);
    // no worker alive: this one stays in the queue
    await c.submit(p, q);

    await kill(c.server.child);
    await post;
    await c.startServer();
    const res = await fetch(`${c.serverUrl}/api/v1/tasks/${q}?project_id=${p}`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe('queued');
    expect(c.server.out).toMatch(/unconfirmed before the restart: sent again to w1/);

    const w2 = c.startWorker('w2');
    await waitFor('w2 to take over the task', () => /took over restart-srv\/task-20260101-000000-owned/.test(w2.out), 60_000);
    await waitFor('the write on the replica', () => busBodies(c.server.root, p, t).includes(body), 60_000);
    await waitFor('the queued task run by w2', () => tasksIn(w2.root, p).includes(q), 60_000);
    await waitFor('the write confirmed (its file removed)', () => readdirSync(inflight).length === 0, 30_000);
    expect(busBodies(w2.root, p, t).filter((b) => b === body)).toHaveLength(1);
    expect(busBodies(c.server.root, p, t).filter((b) => b === body)).toHaveLength(1);
  });
});
