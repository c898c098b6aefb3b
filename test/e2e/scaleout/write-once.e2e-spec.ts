import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectNats, type NatsLink } from '@app/scaleout';
import { natsServerAvailable } from '../../utils/nats-server';
import { Cluster, taskDone, waitFor } from './cluster';

// #31: stop / resume / cancel carry write ids and are applied once on the worker, also when the
// same write comes again after the worker was SIGKILLed and restarted (its dedupe record is a
// file of the task, APPLIED-WRITES.json). Real nats-server, server and worker processes; the
// routed writes are published the way the server publishes them (CONDUCTOR_CONTROL).
const describeNats = natsServerAvailable() ? describe : describe.skip;

describeNats('scale-out: control writes are applied once', () => {
  const c = new Cluster();
  let link: NatsLink;
  const answers = new Map<string, { result?: { reopened?: boolean; duplicate?: boolean }; error?: unknown }>();
  jest.setTimeout(180_000);
  beforeAll(async () => {
    await c.start(1);
    link = await connectNats(c.nats.url, 'test-writes');
    link.nc.subscribe('_INBOX.once.>', {
      callback: (_e, m) => {
        answers.set(m.subject.split('.')[2], JSON.parse(m.string()));
      },
    });
  });
  afterAll(async () => {
    await link?.close();
    await c.dispose();
  });

  const send = (writeId: string, write: Record<string, unknown>) =>
    link.js.publish('conductor.control.w1', JSON.stringify({ writeId, replyTo: `_INBOX.once.${writeId}`, write }));
  /** How often the worker's processes applied the write (each process logs every write it applies). */
  const applied = (writeId: string) => c.workers.map((w) => w.out.split('\n').filter((l) => l.endsWith(`write ${writeId} applied`)).length).reduce((a, b) => a + b, 0);

  it('server and worker say at start that they cannot confirm JetStream fsyncs every write', async () => {
    await waitFor('the server to say so', () => /cannot confirm .*JetStream fsyncs every write/.test(c.server.out), 10_000);
    expect(c.workers[0].out).toMatch(/cannot confirm .*JetStream fsyncs every write/);
  });

  it('a burst of cancel/resume writes, sent again after a worker SIGKILL and restart: each applied once', async () => {
    const p = 'once';
    const t = 'task-20260101-000000-once';
    await c.submit(p, t);
    await waitFor('the task DONE in the replica', () => taskDone(c.server.root, p, t), 60_000);
    const w1 = c.workers[0];
    const taskDir = join(w1.root, p, t);

    // resume (remove DONE) and cancel (write DONE), alternating; the last one is a cancel
    const ids = Array.from({ length: 10 }, (_, i) => `burst-${i}`);
    const op = (i: number) => (i % 2 === 0 ? 'resume' : 'done');
    for (const [i, id] of ids.entries()) await send(id, { op: op(i), projectId: p, taskId: t });
    await waitFor('the worker to apply part of the burst', () => ids.filter((id) => applied(id) > 0).length >= 3, 30_000);
    const killed = new Promise((r) => w1.child.once('exit', r));
    w1.child.kill('SIGKILL');
    await killed;

    // the same root and host: unacked writes come again from JetStream, and the server's re-sends too
    const again = c.startWorker('w1');
    await waitFor('the restarted worker to pull', () => again.out.includes('pulling from'), 30_000);
    for (const [i, id] of ids.entries()) await send(id, { op: op(i), projectId: p, taskId: t });
    await waitFor('an answer to every write', () => ids.every((id) => answers.has(id)), 30_000);
    // (a line the killed process wrote just before the SIGKILL may be lost with it: at most once here, recorded below)
    for (const id of ids) expect({ id, appliedTwice: applied(id) > 1 }).toEqual({ id, appliedTwice: false });
    const record = JSON.parse(readFileSync(join(taskDir, 'APPLIED-WRITES.json'), 'utf8')) as { writes: { id: string }[] };
    expect(record.writes.map((w) => w.id)).toEqual(ids);
    // the last write is a cancel: DONE is there, and no earlier resume applied again removed it
    expect(existsSync(join(taskDir, 'DONE'))).toBe(true);
    expect(answers.get('burst-0')?.result?.reopened).toBe(true);
    // the answers may all have come before the SIGKILL: wait for the restarted process to answer a re-sent write
    await waitFor('the restarted worker to answer a write again', () => /write burst-\d already applied \(answered again\)/.test(again.out), 30_000);
  });
});
