import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BusCursor, BusWriter, readMessages, repairBusFile } from '@app/messagebus';
import { referenceRead } from './reference-reader';
import { tempDir } from './tmp';

/** Issue #31: a complete, acknowledged record followed by bytes of a foreign or broken writer. */
const base = { type: 'INFO', project_id: 'proj', task_id: 'task-x', run_id: 'r' };
const FOREIGN = [Buffer.from([0x00, 0xff, 0x13]), Buffer.from([0xfe, 0xed]), Buffer.from('junk\x00'), Buffer.from([0x80]), Buffer.from('ok\nbad\x01')];

async function seeded(dir: string, name: string) {
  const bus = join(dir, name);
  const w = new BusWriter(bus);
  const acked = [await w.append({ ...base, body: 'first' }), await w.append({ ...base, body: 'second\nline' })];
  w.close();
  return { bus, acked, before: readFileSync(bus) };
}

describe('foreign bytes never cost a complete record', () => {
  it.each(FOREIGN.map((b, i) => [i, b] as const))('case %i: every reader keeps the record; the next append keeps every byte, quarantines the tail and names it in an ERROR', async (i, junk) => {
    const { dir, cleanup } = tempDir();
    try {
      const { bus, acked, before } = await seeded(dir, 'bus.md');
      appendFileSync(bus, junk);
      const lastBody = junk.includes(0x0a) ? `second\nline\n${junk.subarray(0, junk.indexOf(0x0a)).toString()}` : 'second\nline';
      expect(readMessages(bus).map((m) => [m.msg_id, m.body])).toEqual([
        [acked[0].msg_id, 'first'],
        [acked[1].msg_id, lastBody],
      ]);
      const cursor = new BusCursor(bus);
      expect(cursor.readNew().map((m) => m.msg_id)).toEqual(acked.map((m) => m.msg_id));

      const after = await new BusWriter(bus).append({ ...base, body: `after ${i}` });
      const file = readFileSync(bus);
      // nothing truncated: the file still starts with every byte it had
      expect(file.subarray(0, before.length + junk.length).equals(Buffer.concat([before, junk]))).toBe(true);
      const quarantined = readdirSync(dir).filter((f) => f.startsWith('bus.md.quarantine-'));
      expect(quarantined).toHaveLength(1);
      const tail = junk.includes(0x0a) ? junk.subarray(junk.lastIndexOf(0x0a) + 1) : junk;
      expect(readFileSync(join(dir, quarantined[0])).equals(tail)).toBe(true);

      const msgs = readMessages(bus);
      expect(msgs.map((m) => m.msg_id).slice(0, 2)).toEqual(acked.map((m) => m.msg_id));
      expect(msgs[1].body).toBe(lastBody);
      expect(msgs[2]).toMatchObject({ type: 'ERROR', project_id: 'proj', task_id: 'task-x' });
      expect(msgs[2].body).toContain(join(dir, quarantined[0]));
      expect(msgs.slice(3).map((m) => [m.msg_id, m.body])).toEqual([[after.msg_id, `after ${i}`]]);
      // the incremental reader sees the same messages as a fresh read
      expect([...acked, ...cursor.readNew()].map((m) => m.msg_id)).toEqual(msgs.map((m) => m.msg_id));
      // upstream's reader still reads every record and the new message
      expect(referenceRead(file.toString('utf8')).map((m) => m.msg_id)).toEqual(msgs.map((m) => m.msg_id));
      // one repair only
      await new BusWriter(bus).append({ ...base, body: 'later' });
      expect(readdirSync(dir).filter((f) => f.startsWith('bus.md.quarantine-'))).toHaveLength(1);
      expect(readMessages(bus).map((m) => m.body).slice(-2)).toEqual([`after ${i}`, 'later']);
    } finally {
      cleanup();
    }
  });

  it('bus repair quarantines foreign bytes instead of cutting the record they follow', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const { bus, acked, before } = await seeded(dir, 'bus.md');
      appendFileSync(bus, Buffer.from([0x00, 0xff]));
      const r = await repairBusFile(bus);
      expect(r.removedBytes).toBe(0);
      expect(r.quarantined).toEqual({ file: expect.stringContaining('bus.md.quarantine-'), bytes: 2 });
      expect(readFileSync(bus).subarray(0, before.length).equals(before)).toBe(true);
      const msgs = readMessages(bus);
      expect(msgs.map((m) => m.msg_id).slice(0, 2)).toEqual(acked.map((m) => m.msg_id));
      expect(msgs.map((m) => m.type)).toEqual(['INFO', 'INFO', 'ERROR']);
      expect(msgs[2].body).toContain(r.quarantined!.file);
    } finally {
      cleanup();
    }
  });

  it('a tail shaped like our own interrupted write is still cut (never acknowledged)', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const { bus, acked, before } = await seeded(dir, 'bus.md');
      appendFileSync(bus, '\n---\nmsg_id: MSG-20260101-120000-000000001-PID00001-0001\nts: 2026-01-01T12:00:00Z\n---\nhalf a bo');
      const after = await new BusWriter(bus).append({ ...base, body: 'after' });
      expect(readFileSync(bus).subarray(0, before.length).equals(before)).toBe(true);
      expect(readMessages(bus).map((m) => m.msg_id)).toEqual([...acked.map((m) => m.msg_id), after.msg_id]);
      expect(readdirSync(dir).filter((f) => f.includes('quarantine'))).toEqual([]);
    } finally {
      cleanup();
    }
  });
});
