import { closeSync, mkdirSync, openSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { flockSync } from 'fs-ext';
import { BusError, BusWriter, newMessageId, readMessages, rotateBus } from '@app/messagebus';
import { tempDir } from './tmp';

const msg = (body: string, extra: Record<string, unknown> = {}) => ({ type: 'INFO', project_id: 'proj', task_id: 'task-x', run_id: 'run-1', body, ...extra });

describe('BusWriter', () => {
  let dir: string;
  let cleanup: () => void;
  let bus: string;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir());
    bus = join(dir, 'TASK-MESSAGE-BUS.md');
  });
  afterEach(() => cleanup());

  it('writes a message under an id chosen ahead (newMessageId), and refuses an id of another shape', async () => {
    const id = newMessageId();
    const w = new BusWriter(bus);
    const m = await w.append({ ...msg('named ahead'), msg_id: id });
    await expect(w.append({ ...msg('bad'), msg_id: 'MSG-1\nrun_id: x' })).rejects.toThrow(/invalid msg_id/);
    w.close();
    expect(m.msg_id).toBe(id);
    expect(readMessages(bus).map((x) => [x.msg_id, x.body])).toEqual([[id, 'named ahead']]);
  });

  it('creates the file 0644 and writes the separator only between entries', async () => {
    const w = new BusWriter(bus);
    const a = await w.append(msg('one'));
    const b = await w.append(msg('two'));
    w.close();
    const text = readFileSync(bus, 'utf8');
    expect(statSync(bus).mode & 0o777).toBe(0o644 & ~process.umask());
    expect(text.startsWith('---\nmsg_id: ')).toBe(true);
    expect(text).toContain(`run_id: run-1\n---\none\n\n---\nmsg_id: ${b.msg_id}\n`);
    expect(text.endsWith('---\ntwo\n')).toBe(true);
    expect(readMessages(bus).map((m) => [m.msg_id, m.body])).toEqual([
      [a.msg_id, 'one'],
      [b.msg_id, 'two'],
    ]);
  });

  it('coalesces appends issued together and keeps their order', async () => {
    const w = new BusWriter(bus);
    const stored = await Promise.all(Array.from({ length: 500 }, (_, i) => w.append(msg(`m${i}`))));
    w.close();
    const read = readMessages(bus);
    expect(read.map((m) => m.body)).toEqual(stored.map((m) => m.body));
    expect(new Set(read.map((m) => m.msg_id)).size).toBe(500);
  });

  it('shares one descriptor among the writers of one path in a process', async () => {
    const openFds = () => readdirSync('/proc/self/fd').length;
    const before = openFds();
    const writers = Array.from({ length: 50 }, () => new BusWriter(bus));
    const stored = await Promise.all(writers.map((w, i) => w.append(msg(`w${i}`))));
    expect(openFds()).toBe(before + 1);
    writers[0].close();
    expect(openFds()).toBe(before);
    expect(readMessages(bus).map((m) => m.msg_id)).toEqual(stored.map((m) => m.msg_id));
  });

  it('rejects invalid messages without touching the file', async () => {
    const w = new BusWriter(bus);
    await expect(w.append(msg('x', { type: '' }))).rejects.toThrow('message type is empty');
    await expect(new BusWriter(bus, { maxBodyBytes: 65536 }).append(msg('x'.repeat(70000)))).rejects.toMatchObject({ code: 'TOO_LARGE' });
    expect(() => statSync(bus)).toThrow();
  });

  it('refuses a symlinked bus path and a directory', async () => {
    const target = join(dir, 'real.md');
    writeFileSync(target, '');
    symlinkSync(target, bus);
    await expect(new BusWriter(bus).append(msg('x'))).rejects.toMatchObject({ code: 'SYMLINK', message: `message bus path "${bus}" is a symlink` });
    expect(readFileSync(target, 'utf8')).toBe('');
    const asDir = join(dir, 'PROJECT-MESSAGE-BUS.md');
    mkdirSync(asDir);
    await expect(new BusWriter(asDir).append(msg('x'))).rejects.toMatchObject({ code: 'NOT_REGULAR_FILE' });
    expect(readdirSync(asDir)).toEqual([]);
  });

  it('fails on a missing parent folder instead of creating it', async () => {
    await expect(new BusWriter(join(dir, 'nope', 'TASK-MESSAGE-BUS.md')).append(msg('x'))).rejects.toMatchObject({ code: 'IO' });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('waits for a lock held through another descriptor, then times out with retries', async () => {
    writeFileSync(bus, '');
    const holder = openSync(bus, 'r');
    flockSync(holder, 'ex');
    const w = new BusWriter(bus, { lockTimeoutMs: 40, retries: 2 });
    const err = await w.append(msg('blocked')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BusError);
    expect((err as BusError).code).toBe('LOCK_TIMEOUT');
    expect((err as BusError).message).toBe('append failed after 2 attempts: lock message bus: lock timeout');
    expect(readFileSync(bus, 'utf8')).toBe('');
    w.close();
    // A patient writer: its first try (a microtask) finds the lock held, so it is waiting when the
    // holder lets go; a short budget here would race the release on a loaded machine.
    const patient = new BusWriter(bus, { lockTimeoutMs: 30_000 });
    let settled = false;
    const pending = patient.append(msg('after release')).finally(() => (settled = true));
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    flockSync(holder, 'un');
    await expect(pending).resolves.toMatchObject({ body: 'after release' });
    closeSync(holder);
    patient.close();
    expect(readMessages(bus).map((m) => m.body)).toEqual(['after release']);
  });

  it('follows a file replaced under its open descriptor (manual rotation)', async () => {
    const w = new BusWriter(bus);
    await w.append(msg('before'));
    const archived = rotateBus(bus, new Date('2026-05-06T07:08:09Z'))!;
    expect(archived).toBe(`${bus}.20260506-070809.archived`);
    await w.append(msg('after'));
    w.close();
    expect(readMessages(archived).map((m) => m.body)).toEqual(['before']);
    expect(readMessages(bus).map((m) => m.body)).toEqual(['after']);
    expect(rotateBus(join(dir, 'missing.md'))).toBeUndefined();
  });

  it('rotates automatically inside the lock once the size threshold is reached', async () => {
    const w = new BusWriter(bus, { rotateAtBytes: 600 });
    for (let i = 0; i < 6; i++) await w.append(msg(`n${i}`));
    w.close();
    const archives = readdirSync(dir).filter((f) => f.endsWith('.archived'));
    expect(archives.length).toBeGreaterThan(0);
    const all = [...archives.flatMap((a) => readMessages(join(dir, a))), ...readMessages(bus)].map((m) => m.body).sort();
    expect(all).toEqual(['n0', 'n1', 'n2', 'n3', 'n4', 'n5']);
    expect(statSync(bus).size).toBeLessThan(600 + 300);
  });

  it('writes fsync-ed entries when asked', async () => {
    const w = new BusWriter(bus, { fsync: true });
    await w.append(msg('durable'));
    w.close();
    expect(readMessages(bus)[0].body).toBe('durable');
  });

  it('stores parents, links and meta and reads them back', async () => {
    const w = new BusWriter(bus);
    const parent = await w.append(msg('question', { type: 'QUESTION' }));
    await w.append(
      msg('answer', {
        parents: [{ msg_id: parent.msg_id, kind: 'thread_answer' }],
        links: [{ url: 'file:///tmp/big.log', label: 'full log', kind: 'attachment' }],
        meta: { b: '2', a: 'x: y' },
      }),
    );
    w.close();
    const [, answer] = readMessages(bus);
    expect(answer.parents).toEqual([{ msg_id: parent.msg_id, kind: 'thread_answer' }]);
    expect(answer.links).toEqual([{ url: 'file:///tmp/big.log', label: 'full log', kind: 'attachment' }]);
    expect(answer.meta).toEqual({ a: 'x: y', b: '2' });
  });
});
