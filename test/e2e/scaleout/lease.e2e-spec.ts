import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectNats, DEFAULT_LEASE_MS, TASKS_STREAM, Worker, WORKERS_CONSUMER, type NatsLink } from '@app/scaleout';
import { createBusWriters } from '@app/messagebus';
import { createRunnerService } from '@app/runner';
import { createRunsLayout } from '@app/storage';
import { loopParts } from '../../utils/loop-parts';
import { NatsServerProcess, natsServerAvailable } from '../../utils/nats-server';

// The task lease is the ack wait of the workers' shared consumer. The server used to create that
// consumer with its own default (30 s) when it connected first, so a killed `--lease 3s` worker's
// task came back only after 30 s (the orphans e2e flake). Real nats-server, real workers.
const describeNats = natsServerAvailable() ? describe : describe.skip;

describeNats('scale-out: the task lease is the workers’ consumer ack wait', () => {
  const nats = new NatsServerProcess();
  const root = mkdtempSync(join(tmpdir(), 'lease-'));
  const workers: Worker[] = [];
  let server: NatsLink;
  const lines: string[] = [];
  jest.setTimeout(60_000);
  beforeAll(async () => {
    await nats.start();
    server = await connectNats(nats.url, 'conductor');
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await server.close();
    await nats.dispose();
    rmSync(root, { recursive: true, force: true });
  });
  const ackWaitMs = async () => ((await server.jsm.consumers.info(TASKS_STREAM, WORKERS_CONSUMER)).config.ack_wait ?? 0) / 1_000_000;
  const startWorker = async (host: string, leaseMs?: number) => {
    const w = new Worker({ url: nats.url, layout: createRunsLayout(join(root, host)), writers: createBusWriters(), host, leaseMs, log: (l) => lines.push(l), runner: createRunnerService(loopParts) });
    workers.push(w);
    await w.start();
    return w;
  };

  it('is not created by the server: the first worker sets it', async () => {
    await expect(server.jsm.consumers.info(TASKS_STREAM, WORKERS_CONSUMER)).rejects.toThrow();
    const w1 = await startWorker('w1', 3000);
    expect(w1.leaseMs).toBe(3000);
    expect(await ackWaitMs()).toBe(3000);
  });

  it('a worker without --lease heartbeats within the queue’s lease, not its own default', async () => {
    const w2 = await startWorker('w2');
    expect(DEFAULT_LEASE_MS).not.toBe(3000);
    expect(w2.leaseMs).toBe(3000);
    expect(lines.join('\n')).toMatch(/worker w2: pulling tasks \(capacity 4, lease 3000 ms\)/);
  });

  it('a worker given another lease sets it for every worker and says so', async () => {
    const w3 = await startWorker('w3', 5000);
    expect(w3.leaseMs).toBe(5000);
    expect(await ackWaitMs()).toBe(5000);
    expect(lines.join('\n')).toMatch(/worker w3: the task lease \(the queue's ack wait\) was 3000 ms; it is 5000 ms for every worker from now on/);
  });
});
