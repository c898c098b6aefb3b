import { join } from 'node:path';
import { BusWriter, readBusPage, type BusMessage } from '@app/messagebus';
import { tempDir } from './tmp';

/** Issue #29: bounded bus reads — one page around a cursor, following the cursor visits every message once. */
describe('readBusPage', () => {
  let dir: string;
  let cleanup: () => void;
  let bus: string;
  let all: BusMessage[];
  beforeAll(async () => {
    ({ dir, cleanup } = tempDir());
    bus = join(dir, 'PROJECT-MESSAGE-BUS.md');
    const w = new BusWriter(bus);
    all = [];
    // bodies that look like an entry opener must not be taken for one
    for (let i = 0; i < 250; i++) all.push(await w.append({ type: 'INFO', project_id: 'p', task_id: '', run_id: '', body: i % 7 === 0 ? `msg_id: fake-${i}\n${'y'.repeat(i * 40)}` : `body ${i}` }));
    w.close();
  });
  afterAll(() => cleanup());
  const ids = (ms: BusMessage[]) => ms.map((m) => m.msg_id);

  it('pages forward from the start with `after`, each message once, in order', () => {
    const seen: BusMessage[] = [];
    let after: string | undefined;
    for (;;) {
      const page = readBusPage(bus, { kind: 'oldest', after, limit: 40 });
      expect(page.messages.length).toBeLessThanOrEqual(40);
      seen.push(...page.messages);
      if (!page.hasMore) break;
      after = page.messages[page.messages.length - 1].msg_id;
    }
    expect(ids(seen)).toEqual(ids(all));
    expect(seen[7].body).toBe(all[7].body);
  });

  it('pages backward from the newest with `before`, each message once', () => {
    const seen: BusMessage[] = [];
    let before: string | undefined;
    for (;;) {
      const page = readBusPage(bus, { kind: 'newest', before, limit: 33 });
      seen.unshift(...page.messages);
      if (!page.hasMore) break;
      before = page.messages[0].msg_id;
    }
    expect(ids(seen)).toEqual(ids(all));
  });

  it('since + limit keeps the newest limit after since, and says when some were left out', () => {
    expect(ids(readBusPage(bus, { kind: 'since', since: all[240].msg_id, limit: 50 }).messages)).toEqual(ids(all.slice(241)));
    const cut = readBusPage(bus, { kind: 'since', since: all[10].msg_id, limit: 50 });
    expect([ids(cut.messages), cut.hasMore]).toEqual([ids(all.slice(-50)), true]);
    expect(() => readBusPage(bus, { kind: 'since', since: 'MSG-nope', limit: 5 })).toThrow(expect.objectContaining({ code: 'SINCE_NOT_FOUND' }));
    expect(() => readBusPage(bus, { kind: 'oldest', after: 'fake-7', limit: 5 })).toThrow(expect.objectContaining({ code: 'SINCE_NOT_FOUND' }));
  });
});
