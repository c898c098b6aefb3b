import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BusWriter, readMessages, serializeEntry } from '@app/messagebus';
import { referenceRead } from './reference-reader';
import { tempDir } from './tmp';

const base = { type: 'INFO', project_id: 'proj', task_id: 'task-x', run_id: 'r' };

describe('an entry torn by a writer that died mid-write', () => {
  it('never swallows the next appended message, whatever byte the tear happened at', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const seed = join(dir, 'seed.md');
      const w = new BusWriter(seed);
      const kept = [await w.append({ ...base, body: 'first' }), await w.append({ ...base, body: 'second\n---\nline' })];
      w.close();
      const seedText = readFileSync(seed);
      // A multi-line meta value (a literal block; our writers refuse one, upstream files may hold one) tears too.
      const entry = serializeEntry(
        { msgId: 'MSG-20260101-120000-000000001-PID00001-0001', tsText: '2026-01-01T12:00:00Z', type: 'INFO', projectId: 'proj', taskId: 'task-x', runId: 'r', meta: { quoted: 'a: "b"', multi: 'x\ny' } },
        'torn body\nmore',
      );
      const torn = Buffer.from('\n' + entry);
      for (let cut = 1; cut < torn.length; cut++) {
        const bus = join(dir, `bus-${cut}.md`);
        writeFileSync(bus, seedText);
        appendFileSync(bus, torn.subarray(0, cut));
        const after = await new BusWriter(bus).append({ ...base, body: `after ${cut}` });
        const msgs = readMessages(bus);
        const where = `cut at byte ${cut}: ${JSON.stringify(torn.subarray(0, cut).toString())}`;
        // Before the torn entry's fence line is complete ("\n---"), its bytes can only read as the
        // end of the previous body; from the fence on, earlier messages stay byte-identical.
        const tornBytes = torn.subarray(0, cut).toString();
        const absorbed = (body: string) => `${body}\n${tornBytes}${tornBytes.endsWith('\n') ? '' : '\n'}\n`.replace(/\n\n$/, '');
        const keptBodies = kept.map((m, i) => [m.msg_id, cut < 4 && i === 1 ? absorbed(m.body) : m.body]);
        expect([where, msgs.slice(0, 2).map((m) => [m.msg_id, m.body])]).toEqual([where, keptBodies]);
        expect([where, msgs.at(-1)?.msg_id, msgs.at(-1)?.body]).toEqual([where, after.msg_id, `after ${cut}`]);
        expect([where, referenceRead(readFileSync(bus, 'utf8')).at(-1)?.msg_id]).toEqual([where, after.msg_id]);
      }
    } finally {
      cleanup();
    }
  });
});
