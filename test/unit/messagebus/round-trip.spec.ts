import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BusWriter, readMessages } from '@app/messagebus';
import { referenceRead } from './reference-reader';
import { tempDir } from './tmp';

/**
 * Round-trip exactness with upstream for bodies ending in newlines and blank lines (issue #31).
 * Upstream writes the body plus `\n` only when it does not end in one, and its reader returns a
 * non-final body's bytes minus the separator newline (cli-storage.md §4.2, §4.4).
 */
const FIXTURE = join(__dirname, '..', '..', 'fixtures', 'upstream', 'blank-line-bodies.md');
/** The bodies upstream was given for the fixture, in order. */
const UPSTREAM_BODIES = ['ends in a blank line\n\n', 'two blank lines\n\n\n', 'plain', 'one newline\n', '\n\n', 'last ends blank\n\n'];
const base = { type: 'NOTE', project_id: 'golden', task_id: '', run_id: '' };

describe('bodies ending in blank lines: ours and upstream agree byte for byte', () => {
  it("reads upstream's bytes back exactly (upstream cannot tell 'x' from 'x\\n': both read as 'x')", () => {
    const bodies = readMessages(FIXTURE).map((m) => m.body);
    expect(bodies).toEqual(UPSTREAM_BODIES.map((b) => (b === 'one newline\n' ? 'one newline' : b)));
  });

  it("writes what upstream's reader returns exactly (non-final entries) and reads its own bodies back exactly", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const bus = join(dir, 'bus.md');
      const w = new BusWriter(bus);
      const bodies = ['ends in a blank line\n\n', 'two blank lines\n\n\n', 'one newline\n', '\n', '\n\n', 'crlf\r\n', 'cr\r', '', 'plain', 'last\n\n'];
      for (const body of bodies) await w.append({ ...base, body });
      w.close();
      expect(readMessages(bus).map((m) => m.body)).toEqual(bodies);
      const upstream = referenceRead(readFileSync(bus, 'utf8')).map((m) => m.body);
      // Upstream's reader: a non-final body ending in a newline is exact; one without gains its
      // usual `\n` (the writer's terminator); the final entry loses one `\n` (then one `\r`).
      const expected = bodies.map((b, i) => (i === bodies.length - 1 ? b.replace(/\n$/, '').replace(/\r$/, '') : b.endsWith('\n') ? b : `${b}\n`));
      expect(upstream).toEqual(expected);
    } finally {
      cleanup();
    }
  });

  it("writes the same bytes as upstream's writer for bodies upstream can encode unambiguously", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const ours = readMessages(FIXTURE);
      const bus = join(dir, 'bus.md');
      const w = new BusWriter(bus);
      for (const m of ours.filter((x) => x.body !== 'one newline')) await w.append({ ...base, msg_id: m.msg_id, ts: m.ts, body: m.body });
      w.close();
      const strip = (t: string) => t.replace(/^ts: .*$/gm, 'ts:');
      const entries = readFileSync(FIXTURE, 'utf8').split(/\n(?=---\nmsg_id: )/);
      const upstreamBytes = entries.filter((e) => !e.includes('one newline')).join('\n');
      expect(entries).toHaveLength(UPSTREAM_BODIES.length);
      expect(strip(readFileSync(bus, 'utf8'))).toBe(strip(upstreamBytes));
    } finally {
      cleanup();
    }
  });
});
