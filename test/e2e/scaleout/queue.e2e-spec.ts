import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectNats, ScaleoutServer, TASKS_STREAM, type NatsLink } from '@app/scaleout';
import { natsServerAvailable, NatsServerProcess } from '../../utils/nats-server';

const describeNats = natsServerAvailable() ? describe : describe.skip;

describeNats('work queue (real nats-server)', () => {
  const nats = new NatsServerProcess();
  let root: string;
  let server: ScaleoutServer;
  let link: NatsLink;

  beforeAll(async () => {
    await nats.start();
    root = mkdtempSync(join(tmpdir(), 'queue-'));
    server = new ScaleoutServer(nats.url, root);
    await server.start();
    link = await connectNats(nats.url, 'test');
  });
  afterAll(async () => {
    await server.close();
    await link.close();
    await nats.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  it('rejects a duplicate submission of the same launch by message id', async () => {
    const task = { projectId: 'p', taskId: 'task-20260101-000000-dup', runId: '20260101-0000000000-1-1', prompt: 'x' };
    expect(await server.submit(task)).toBe(true);
    expect(await server.submit(task)).toBe(false);
    expect(await server.submit({ ...task, runId: '20260101-0000000000-1-2' })).toBe(true);
    const info = await link.jsm.streams.info(TASKS_STREAM);
    expect(info.state.messages).toBe(2);
  });

  it('sends a write to a task of unknown owner to every worker and fails in one line when none confirms', async () => {
    expect(await server.ownerOf('p', 'task-20260101-000000-dup')).toBeUndefined();
    const sub = link.nc.subscribe('conductor.control.>', { max: 1 });
    const short = new ScaleoutServer(nats.url, root, { writeTimeoutMs: 500 });
    await short.start();
    try {
      await expect(short.apply({ op: 'stop-task', projectId: 'p', taskId: 'task-20260101-000000-dup', stoppedBy: 'test' })).rejects.toThrow(
        'no worker confirmed the stop-task on task p/task-20260101-000000-dup within 0.5s (sent to every worker; it stays queued)',
      );
    } finally {
      await short.close();
    }
    for await (const m of sub) {
      expect(m.subject).toBe('conductor.control._all');
      expect(JSON.parse(m.string())).toMatchObject({ write: { op: 'stop-task', taskId: 'task-20260101-000000-dup' } });
    }
  });

  it('refuses a URL that is not nats://', async () => {
    await expect(connectNats('http://127.0.0.1:1', 'x')).rejects.toThrow(/invalid NATS URL/);
  });
});
