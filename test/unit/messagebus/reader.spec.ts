import { appendFileSync, mkdirSync, readFileSync, renameSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BusCursor, BusWriter, discoverBus, followBus, parseBus, readMessages, rotateBus, type BusMessage } from '@app/messagebus';
import { createChangeFeed } from '@app/storage';
import { referenceRead } from './reference-reader';
import { tempDir } from './tmp';

const msg = (body: string, type = 'INFO') => ({ type, project_id: 'proj', task_id: 'task-x', run_id: 'r', body });

async function writeBodies(bus: string, bodies: string[]): Promise<BusMessage[]> {
  const w = new BusWriter(bus);
  const out: BusMessage[] = [];
  for (const b of bodies) out.push(await w.append(msg(b)));
  w.close();
  return out;
}

describe('reader', () => {
  let dir: string;
  let cleanup: () => void;
  let bus: string;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir());
    bus = join(dir, 'TASK-MESSAGE-BUS.md');
  });
  afterEach(() => cleanup());

  it('reads a missing file as empty and refuses symlinks', () => {
    expect(readMessages(bus)).toEqual([]);
    writeFileSync(join(dir, 'real'), '');
    symlinkSync(join(dir, 'real'), join(dir, 'link.md'));
    expect(() => readMessages(join(dir, 'link.md'))).toThrow(/is a symlink/);
  });

  it('round-trips every body byte-identically, and the upstream-style reader loses nothing', async () => {
    const bodies = ['plain', '', '\n', 'ends with newline\n', '---', 'a\n---\nb', '\\---', '✓ ünïcode — 日本語', 'x\r\ny', 'last\n\n'];
    const written = await writeBodies(bus, bodies);
    const ours = readMessages(bus);
    expect(ours.map((m) => m.body)).toEqual(bodies);
    expect(ours.map((m) => m.msg_id)).toEqual(written.map((m) => m.msg_id));
    const ref = referenceRead(readFileSync(bus, 'utf8'));
    expect(ref.map((m) => m.msg_id)).toEqual(written.map((m) => m.msg_id));
  });

  it('reads upstream-written files with upstream semantics, including legacy lines', () => {
    writeFileSync(
      bus,
      [
        '# Message bus',
        '[2026-01-02 03:04:05] FACT: legacy fact',
        '[2026-01-02T03:04:06] just words',
        'prose that is ignored',
        '---',
        'msg_id: MSG-A',
        'ts: 2026-02-23T20:49:19.240276Z',
        'type: FACT',
        'project_id: p',
        'task_id: t',
        'run_id: r',
        '---',
        'first body',
        '',
        '---',
        'msg_id: MSG-B',
        "ts: '2026-02-23T20:49:20Z'",
        'type: INFO',
        'project_id: p',
        'parents: [MSG-A]',
        '---',
        'second',
        '',
      ].join('\n'),
    );
    const msgs = readMessages(bus);
    expect(msgs.map((m) => [m.msg_id, m.type, m.body])).toEqual([
      ['LEGACY-LINE-000000002', 'FACT', 'legacy fact'],
      ['LEGACY-LINE-000000003', 'INFO', 'just words'],
      ['MSG-A', 'FACT', 'first body'],
      ['MSG-B', 'INFO', 'second'],
    ]);
    expect(msgs[0].ts.toISOString()).toBe('2026-01-02T03:04:05.000Z');
    expect(msgs[3].parents).toEqual([{ msg_id: 'MSG-A' }]);
  });

  it('re-syncs after a bad header and drops a half-written last entry until it completes', async () => {
    const [a] = await writeBodies(bus, ['good']);
    appendFileSync(bus, '\n---\nmsg_id: [broken\n---\nlost body\n');
    const w = new BusWriter(bus);
    const b = await w.append(msg('after broken'));
    w.close();
    expect(readMessages(bus).map((m) => m.msg_id)).toEqual([a.msg_id, b.msg_id]);
    appendFileSync(bus, '\n---\nmsg_id: MSG-HALF\nts: 2026-01-01T00:00:00Z\ntype: INFO\nproject_id: p\n---\npartial bo');
    expect(readMessages(bus).map((m) => m.msg_id)).toEqual([a.msg_id, b.msg_id]);
    appendFileSync(bus, 'dy\n');
    expect(readMessages(bus).at(-1)).toMatchObject({ msg_id: 'MSG-HALF', body: 'partial body' });
  });

  it('answers since-id and last-N from the tail of a large file', async () => {
    const bodies = Array.from({ length: 3000 }, (_, i) => `message ${i}${i % 7 === 0 ? '\n---\nwith fence' : ''}`);
    const w = new BusWriter(bus);
    const written = await Promise.all(bodies.map((b) => w.append(msg(b))));
    w.close();
    expect(readMessages(bus, { last: 5 }).map((m) => m.body)).toEqual(bodies.slice(-5));
    expect(readMessages(bus, { last: 0 })).toHaveLength(3000);
    expect(readMessages(bus, { sinceId: written[2989].msg_id }).map((m) => m.body)).toEqual(bodies.slice(2990));
    expect(readMessages(bus, { sinceId: written[10].msg_id, last: 3 }).map((m) => m.body)).toEqual(bodies.slice(-3));
    expect(readMessages(bus, { sinceId: written[2999].msg_id })).toEqual([]);
    expect(() => readMessages(bus, { sinceId: 'MSG-NOPE' })).toThrow('since id "MSG-NOPE" not found');
    expect(readMessages(bus, { last: 2500 }).map((m) => m.body)).toEqual(bodies.slice(500));
  });

  it('parses a window that starts with a body beginning with "msg_id:" without misalignment', async () => {
    const bodies = Array.from({ length: 400 }, (_, i) => `msg_id: fake ${i}\n${'x'.repeat(300)}`);
    await writeBodies(bus, bodies);
    expect(readMessages(bus, { last: 3 }).map((m) => m.body)).toEqual(bodies.slice(-3));
  });
});

describe('BusCursor', () => {
  let dir: string;
  let cleanup: () => void;
  let bus: string;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir());
    bus = join(dir, 'TASK-MESSAGE-BUS.md');
  });
  afterEach(() => cleanup());

  it('returns only new messages on each call, waiting for half-written entries', async () => {
    const cursor = new BusCursor(bus);
    expect(cursor.readNew()).toEqual([]);
    await writeBodies(bus, ['a', 'b']);
    expect(cursor.readNew().map((m) => m.body)).toEqual(['a', 'b']);
    expect(cursor.readNew()).toEqual([]);
    appendFileSync(bus, '\n---\nmsg_id: MSG-H\nts: 2026-01-01T00:00:00Z\ntype: INFO\nproject_id: p\n');
    expect(cursor.readNew()).toEqual([]);
    appendFileSync(bus, '---\nhalf');
    expect(cursor.readNew()).toEqual([]);
    appendFileSync(bus, ' done\n');
    expect(cursor.readNew().map((m) => m.body)).toEqual(['half done']);
    await writeBodies(bus, ['c']);
    expect(cursor.readNew().map((m) => m.body)).toEqual(['c']);
    cursor.close();
  });

  it('starts after a since id, at the end, or with the last N', async () => {
    const written = await writeBodies(bus, ['a', 'b', 'c', 'd']);
    const since = new BusCursor(bus, { sinceId: written[1].msg_id });
    const end = new BusCursor(bus, { fromEnd: true });
    const last = new BusCursor(bus, { last: 2 });
    expect(since.readNew().map((m) => m.body)).toEqual(['c', 'd']);
    expect(end.readNew()).toEqual([]);
    expect(last.readNew().map((m) => m.body)).toEqual(['c', 'd']);
    await writeBodies(bus, ['e']);
    for (const c of [since, end, last]) {
      expect(c.readNew().map((m) => m.body)).toEqual(['e']);
      c.close();
    }
    expect(() => new BusCursor(bus, { sinceId: 'MSG-NOPE' })).toThrow(expect.objectContaining({ code: 'SINCE_NOT_FOUND' }));
  });

  it('drains a rotated file, then continues with the new file only', async () => {
    await writeBodies(bus, ['old-1']);
    const cursor = new BusCursor(bus);
    expect(cursor.readNew().map((m) => m.body)).toEqual(['old-1']);
    const w = new BusWriter(bus);
    await w.append(msg('old-2'));
    rotateBus(bus);
    await w.append(msg('new-1'));
    expect(cursor.readNew().map((m) => m.body)).toEqual(['old-2', 'new-1']);
    await w.append(msg('new-2'));
    expect(cursor.readNew().map((m) => m.body)).toEqual(['new-2']);
    w.close();
    truncateSync(bus, 0);
    await writeBodies(bus, ['after truncate']);
    expect(cursor.readNew().map((m) => m.body)).toEqual(['after truncate']);
    cursor.close();
  });
});

describe('followBus', () => {
  it('delivers existing and new messages, survives rotation, and stops', async () => {
    const { dir, cleanup } = tempDir();
    const bus = join(dir, 'PROJECT-MESSAGE-BUS.md');
    try {
      await writeBodies(bus, ['a', 'b', 'c']);
      const seen: string[] = [];
      let wake: () => void = () => undefined;
      const stop = followBus(bus, { last: 2, pollMs: 20, feed: createChangeFeed() }, (m) => {
        seen.push(...m.map((x) => x.body));
        wake();
      });
      const until = (n: number) => new Promise<void>((resolve) => {
        wake = () => seen.length >= n && resolve();
        wake();
      });
      await until(2);
      await writeBodies(bus, ['d']);
      await until(3);
      renameSync(bus, `${bus}.old`);
      await writeBodies(bus, ['fresh']);
      await until(4);
      stop();
      // A control follower started after stop() sees two later writes (two poll rounds at least);
      // the stopped one, polling at the same interval, must have seen neither.
      const control: string[] = [];
      let controlWake: () => void = () => undefined;
      const stopControl = followBus(bus, { last: 0, pollMs: 20, feed: createChangeFeed() }, (m) => {
        control.push(...m.map((x) => x.body));
        controlWake();
      });
      const controlSaw = (body: string) => new Promise<void>((resolve) => {
        controlWake = () => control.includes(body) && resolve();
        controlWake();
      });
      try {
        await writeBodies(bus, ['unseen']);
        await controlSaw('unseen');
        await writeBodies(bus, ['unseen-2']);
        await controlSaw('unseen-2');
      } finally {
        stopControl();
      }
      expect(seen).toEqual(['b', 'c', 'd', 'fresh']);
    } finally {
      cleanup();
    }
  });
});

describe('discoverBus', () => {
  it('walks up and prefers the task bus, skipping symlinks', () => {
    const { dir, cleanup } = tempDir();
    try {
      const deep = join(dir, 'p', 'task-20260101-000000-abc', 'runs', 'r1');
      mkdirSync(deep, { recursive: true });
      writeFileSync(join(dir, 'p', 'PROJECT-MESSAGE-BUS.md'), '');
      expect(discoverBus(deep)).toBe(join(dir, 'p', 'PROJECT-MESSAGE-BUS.md'));
      symlinkSync(join(dir, 'p', 'PROJECT-MESSAGE-BUS.md'), join(dir, 'p', 'task-20260101-000000-abc', 'TASK-MESSAGE-BUS.md'));
      expect(discoverBus(deep)).toBe(join(dir, 'p', 'PROJECT-MESSAGE-BUS.md'));
      writeFileSync(join(dir, 'p', 'task-20260101-000000-abc', 'runs', 'MESSAGE-BUS.md'), '');
      expect(discoverBus(deep)).toBe(join(dir, 'p', 'task-20260101-000000-abc', 'runs', 'MESSAGE-BUS.md'));
    } finally {
      cleanup();
    }
  });
});

describe('parseBus', () => {
  it('keeps the trailing-newline rule of upstream for files written by upstream', () => {
    const text = '---\nmsg_id: A\ntype: T\nproject_id: p\n---\none\n\n---\nmsg_id: B\ntype: T\nproject_id: p\n---\ntwo\n';
    expect(parseBus(Buffer.from(text)).map((m) => m.body)).toEqual(['one', 'two']);
    expect(referenceRead(text).map((m) => m.body)).toEqual(['one\n', 'two']);
  });
});
