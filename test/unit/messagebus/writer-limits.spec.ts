import { join } from 'node:path';
import { BusError, BusWriter, MAX_BODY_BYTES, onBusAppend, readMessages, type BusMessage } from '@app/messagebus';
import { tempDir } from './tmp';

describe('BusWriter body limit and append observer (issue #12)', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => ({ dir, cleanup } = tempDir('bus-limit-')));
  afterEach(() => cleanup());
  const msg = (body: string) => ({ type: 'INFO', project_id: 'p', task_id: '', run_id: '', body });

  it('accepts bodies up to 16 MiB by default and honours maxBodyBytes', async () => {
    expect(MAX_BODY_BYTES).toBe(16 * 1024 * 1024);
    const bus = join(dir, 'PROJECT-MESSAGE-BUS.md');
    const big = 'é'.repeat(600 * 1024); // 1.2 MB of two-byte characters
    await new BusWriter(bus).append(msg(big));
    const small = new BusWriter(bus, { maxBodyBytes: 10 });
    await expect(small.append(msg('x'.repeat(11)))).rejects.toMatchObject({ code: 'TOO_LARGE', message: expect.stringContaining('over the 10-byte limit') });
    await expect(small.append(msg('x'.repeat(11)))).rejects.toBeInstanceOf(BusError);
    await small.append(msg('x'.repeat(10)));
    expect(readMessages(bus).map((m) => m.body.length)).toEqual([big.length, 10]);
  });

  it('tells observers about every append of the process, once per message, with the bus path', async () => {
    const bus = join(dir, 'PROJECT-MESSAGE-BUS.md');
    const seen: Array<[string, string]> = [];
    const off = onBusAppend((path, messages: BusMessage[]) => messages.forEach((m) => seen.push([path, m.msg_id])));
    const throwing = onBusAppend(() => {
      throw new Error('observer bug');
    });
    try {
      const w = new BusWriter(bus);
      const stored = await Promise.all([w.append(msg('a')), w.append(msg('b')), new BusWriter(bus).append(msg('c'))]);
      await expect(w.append(msg('x'.repeat(MAX_BODY_BYTES + 1)))).rejects.toMatchObject({ code: 'TOO_LARGE' });
      expect(seen).toEqual(stored.map((m) => [bus, m.msg_id]));
    } finally {
      off();
      throwing();
    }
    await new BusWriter(bus).append(msg('after unsubscribe'));
    expect(seen).toHaveLength(3);
  });

  it('reads the last messages of a bus of large messages (tail windows that hold fewer entries than asked)', async () => {
    const bus = join(dir, 'PROJECT-MESSAGE-BUS.md');
    const w = new BusWriter(bus);
    const big = (i: number) => `${i}\n${'---\nü line\n'.repeat(20_000)}`; // ~240 KB each, with escaped fences
    for (let i = 0; i < 12; i++) await w.append(msg(big(i)));
    w.close();
    expect(readMessages(bus, { last: 3 }).map((m) => m.body)).toEqual([big(9), big(10), big(11)]);
    expect(readMessages(bus, { last: 1 }).map((m) => m.body.slice(0, 3))).toEqual(['11\n']);
    expect(readMessages(bus, { last: 50 })).toHaveLength(12);
  });
});
