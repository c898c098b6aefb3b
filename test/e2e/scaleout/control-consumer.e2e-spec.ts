import { connectNats, CONTROL_STREAM, ensureControlConsumer, type NatsLink } from '@app/scaleout';
import { NatsServerProcess, natsServerAvailable } from '../../utils/nats-server';

// #31: a worker process killed with control writes taken but not acked. Its restarted process
// must get them again before the writes sent after them, in stream order (one task's resume and
// cancel stay in the order they were sent). Real nats-server; the killed process is a connection
// that pulled without acking and closed.
const describeNats = natsServerAvailable() ? describe : describe.skip;

describeNats('scale-out: the control consumer after a killed worker process', () => {
  const nats = new NatsServerProcess();
  const links: NatsLink[] = [];
  const lines: string[] = [];
  jest.setTimeout(60_000);
  beforeAll(() => nats.start());
  afterAll(async () => {
    await Promise.all(links.map((l) => l.close()));
    await nats.dispose();
  });
  const link = async (name: string) => {
    const l = await connectNats(nats.url, name);
    links.push(l);
    return l;
  };
  const pull = async (l: NatsLink, n: number) => {
    const consumer = await l.js.consumers.get(CONTROL_STREAM, 'control-w9');
    const got = [];
    for (let i = 0; i < n; i++) {
      const m = await consumer.next({ expires: 2000 });
      if (!m) throw new Error(`only ${i} of ${n} control messages came`);
      got.push(m);
    }
    return got;
  };

  it('delivers the unacked writes again first, then the later ones, in the order they were sent', async () => {
    const first = await link('first');
    await ensureControlConsumer(first.jsm, 'control-w9', (l) => lines.push(l));
    for (let i = 0; i < 6; i++) await first.js.publish('conductor.control.w9', `write-${i}`);
    const taken = await pull(first, 4);
    await taken[0].ackAck();
    await taken[2].ackAck(); // acked out of order: the floor stays at write-0
    await first.close(); // the kill: write-1 and write-3 taken, never acked

    const again = await link('again');
    await ensureControlConsumer(again.jsm, 'control-w9', (l) => lines.push(l));
    const order = (await pull(again, 5)).map((m) => {
      m.ack();
      return m.string();
    });
    // write-2 comes again too (acked above the floor): the worker answers it from APPLIED-WRITES.json
    expect(order).toEqual(['write-1', 'write-2', 'write-3', 'write-4', 'write-5']);
    expect(lines).toEqual([expect.stringMatching(/^2 control write\(s\) were taken but not acknowledged .* from stream sequence 2, in order$/)]);
  });

  it('keeps the consumer as it is when nothing was left unacked', async () => {
    const l = await link('third');
    await ensureControlConsumer(l.jsm, 'control-w9', (x) => lines.push(x));
    await l.js.publish('conductor.control.w9', 'write-6');
    expect((await pull(l, 1)).map((m) => m.string())).toEqual(['write-6']);
    expect(lines).toHaveLength(1);
  });
});
