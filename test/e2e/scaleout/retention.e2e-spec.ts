import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseBus } from '@app/messagebus';
import { CHANGES_STREAM, connectNats, TASKS_STREAM, type NatsLink } from '@app/scaleout';
import { natsServerAvailable } from '../../utils/nats-server';
import { Cluster, replicaDiff, tasksIn, waitFor } from './cluster';

// Real nats-server with a deliberately small CONDUCTOR_CHANGES (16 KiB), a real worker, and a
// `conductor --nats` that starts only after the stream dropped its oldest records.
const describeNats = natsServerAvailable() ? describe : describe.skip;

const busIds = (file: string) => (existsSync(file) ? parseBus(readFileSync(file)).map((m) => m.msg_id).sort() : []);

describeNats('bounded streams: a late server resynchronises from a snapshot (real nats-server)', () => {
  const c = new Cluster();
  let link: NatsLink;
  jest.setTimeout(180_000);

  beforeAll(async () => {
    await c.nats.start();
    // the first client creates the streams: here with tiny bounds (production defaults: docs/scale-out.md)
    link = await connectNats(c.nats.url, 'test-setup', { retention: { changesMaxBytes: 16 * 1024 } });
    await c.start(1, { server: false });
  });
  afterAll(async () => {
    await link.close();
    await c.dispose();
  });

  it('streams are bounded as documented', async () => {
    const changes = (await link.jsm.streams.info(CHANGES_STREAM)).config;
    expect(changes.max_bytes).toBe(16 * 1024);
    expect(changes.max_age).toBe(7 * 86_400 * 1e9);
    const tasks = (await link.jsm.streams.info(TASKS_STREAM)).config;
    expect([tasks.max_bytes, tasks.max_age, tasks.discard]).toEqual([1024 ** 3, 7 * 86_400 * 1e9, 'new']);
  });

  it('a server started after records aged out asks for a snapshot and ends byte-identical', async () => {
    const p = 'late';
    const tasks = Array.from({ length: 4 }, (_, i) => `task-20260101-000000-late${i}`);
    for (const [i, t] of tasks.entries()) {
      const task = { projectId: p, taskId: t, runId: `20260101-0000000000-1-${i + 1}`, prompt: `work on ${t}\n`, agent: 'codex', env: { FAKE_AGENT_LINES: '60' } };
      await link.js.publish(`conductor.tasks.${p}`, JSON.stringify(task), { msgID: `${p}/${t}/${task.runId}` });
    }
    const worker = c.workers[0];
    await waitFor('all tasks DONE on the worker', () => tasks.every((t) => existsSync(join(worker.root, p, t, 'DONE'))), 90_000);
    // the test is only meaningful when records are gone; the worker publishes a task's last changes
    // after its DONE file exists, so wait for the stream to pass its bound rather than race it
    await waitFor('the CHANGES stream to drop its oldest records', async () => (await link.jsm.streams.info(CHANGES_STREAM)).state.first_seq > 1, 30_000);

    await c.startServer();
    const replica = c.server.root;
    await waitFor('the replica to match the worker', () => tasksIn(replica, p).length === tasks.length && replicaDiff(worker.root, replica, p).length === 0, 60_000).catch(() => undefined);
    expect(replicaDiff(worker.root, replica, p)).toEqual([]);
    expect(busIds(join(replica, p, 'PROJECT-MESSAGE-BUS.md'))).toEqual(busIds(join(worker.root, p, 'PROJECT-MESSAGE-BUS.md')));
    // the worker was asked (by the server's gap detection) and sent every task again
    expect(worker.out).toMatch(/snapshot sent: 4 task\(s\)/);
  });
});
