import { parse } from 'yaml';
import { escapeBody, parseBus, prepareMessage, serializeEntry, unescapeBody } from '@app/messagebus';
import { emitHeader, parseGeneric, parseHeader, yamlScalar } from '@app/messagebus/header';
import { nextMessageId } from '@app/messagebus/msg-id';

describe('msg_id', () => {
  it('has the upstream shape with pid and a counter starting at 0001', () => {
    const { msgId, tsText } = nextMessageId(1234567);
    expect(msgId).toMatch(/^MSG-\d{8}-\d{6}-\d{9}-PID34567-\d{4}$/);
    expect(tsText).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/);
  });

  it('never repeats within a process, even past the 4-digit counter wrap', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 30000; i++) ids.add(nextMessageId().msgId);
    expect(ids.size).toBe(30000);
  });

  it('matches the date and time of ts', () => {
    const { msgId, tsText } = nextMessageId();
    const [, date, time] = /^MSG-(\d{8})-(\d{6})/.exec(msgId)!;
    expect(tsText.slice(0, 10).replace(/-/g, '')).toBe(date);
    expect(tsText.slice(11, 19).replace(/:/g, '')).toBe(time);
  });
});

describe('header emitter', () => {
  it('writes the six fixed keys in order, empty values as ""', () => {
    const text = emitHeader({ msgId: 'MSG-1', tsText: '2026-02-23T20:49:19.240276Z', type: 'FACT', projectId: 'my-project', taskId: '', runId: '' });
    expect(text).toBe('msg_id: MSG-1\nts: 2026-02-23T20:49:19.240276Z\ntype: FACT\nproject_id: my-project\ntask_id: ""\nrun_id: ""\n');
  });

  it('adds issue_id, parents, links and sorted meta only when non-empty, with 4-space indentation', () => {
    const text = emitHeader({
      msgId: 'MSG-1',
      tsText: '2026-02-23T20:49:19Z',
      type: 'ISSUE',
      projectId: 'p',
      taskId: 't',
      runId: 'r',
      issueId: 'MSG-1',
      parents: [{ msg_id: 'MSG-0', kind: 'thread_answer', meta: { z: '1', a: 'x y' } }],
      links: [{ url: 'file:///tmp/a b.txt', label: 'log' }],
      meta: { zeta: 'last', alpha: 'first' },
    });
    expect(text).toBe(
      [
        'msg_id: MSG-1',
        'ts: 2026-02-23T20:49:19Z',
        'type: ISSUE',
        'project_id: p',
        'task_id: t',
        'run_id: r',
        'issue_id: MSG-1',
        'parents:',
        '    - msg_id: MSG-0',
        '      kind: thread_answer',
        '      meta:',
        '          a: x y',
        '          z: "1"',
        'links:',
        '    - url: file:///tmp/a b.txt',
        '      label: log',
        'meta:',
        '    alpha: first',
        '    zeta: last',
        '',
      ].join('\n'),
    );
    expect(emitHeader({ msgId: 'M', tsText: 'T', type: 'X', projectId: 'p', taskId: '', runId: '', parents: [], links: [], meta: {} })).not.toMatch(
      /parents|links|meta/,
    );
  });

  it.each([
    ['plain', 'plain'],
    ['', '""'],
    ['true', '"true"'],
    ['yes', '"yes"'],
    ['null', '"null"'],
    ['123', '"123"'],
    ['1.5e3', '"1.5e3"'],
    ['0x1f', '"0x1f"'],
    ['2026-01-01', '"2026-01-01"'],
    ['a: b', '"a: b"'],
    ['a #b', '"a #b"'],
    [' lead', '" lead"'],
    ['- dash', '"- dash"'],
    ['quote"s', 'quote"s'],
    ['tab\there', '"tab\\there"'],
    ['bell\u0007', '"bell\\x07"'],
    ['unicode ✓ ünï', 'unicode ✓ ünï'],
  ])('scalar %j → %s', (value, expected) => {
    expect(yamlScalar(value)).toBe(expected);
  });

  it('uses literal blocks for multi-line values with the right chomping', () => {
    expect(yamlScalar('a\nb')).toBe('|-\n    a\n    b');
    expect(yamlScalar('a\nb\n')).toBe('|\n    a\n    b');
    expect(yamlScalar('a\n\nb')).toBe('|-\n    a\n\n    b');
    expect(yamlScalar('a \nb')).toBe('"a \\nb"');
  });

  it('emits headers that a YAML parser reads back to the same strings', () => {
    const tricky = ['', 'true', '1', 'a: b', ' x', 'x ', '"q"', "it's", 'multi\nline\n', 'c:\\path', '#hash', '@at', 'é✓', 'nul\u0000', 'crlf\r\n'];
    for (const value of tricky) {
      const text = emitHeader({ msgId: 'M', tsText: '2026-01-01T00:00:00Z', type: value || 'T', projectId: 'p', taskId: value, runId: 'r', meta: { [value || 'k']: value } });
      const doc = parse(text, { schema: 'failsafe' }) as Record<string, any>;
      expect(doc.task_id).toBe(value);
      expect(doc.meta[value || 'k']).toBe(value);
      const ours = parseHeader(text);
      expect(ours.task_id).toBe(value);
      expect(ours.meta?.[value || 'k']).toBe(value);
    }
  });
});

describe('header parser', () => {
  it('reads the fast layout and falls back to YAML for anything else', () => {
    const simple = parseHeader('msg_id: M\nts: 2026-02-23T20:49:19.240276Z\ntype: FACT\nproject_id: p\ntask_id: ""\nrun_id: r\n');
    expect(simple).toMatchObject({ msg_id: 'M', type: 'FACT', project_id: 'p', task_id: '', run_id: 'r' });
    expect(simple.ts.toISOString()).toBe('2026-02-23T20:49:19.240Z');
    const rich = parseHeader("msg_id: 'M'\nts: 2026-02-23T20:49:19+02:00\ntype: FACT\nproject_id: p\nparents:\n  - MSG-A\n  - MSG-B\nmeta: {k: v}\n");
    expect(rich.msg_id).toBe('M');
    expect(rich.ts.toISOString()).toBe('2026-02-23T18:49:19.000Z');
    expect(rich.parents).toEqual([{ msg_id: 'MSG-A' }, { msg_id: 'MSG-B' }]);
    expect(rich.meta).toEqual({ k: 'v' });
  });

  const richFields = {
    msgId: 'MSG-1',
    tsText: '2026-11-28T16:17:15.222968155Z',
    type: 'FACT',
    projectId: 'bench',
    taskId: 'task-20260101-000000-abc',
    runId: 'r1',
    parents: [{ msg_id: 'MSG-0', kind: 'source_run_event' }, { msg_id: 'MSG-00' }],
    links: [{ url: '/runs/bench/t/DONE', label: 'task DONE marker', kind: 'task_done' }, { url: '/runs/x: y' }],
    meta: { run_count: '1', 'propagated_at': '2026-11-28T16:17:15.222Z', empty: '', 'a.b-c': 'x #y', quoted: '"q"' },
    ownerEpoch: 3,
  };

  it('reads the parents, links and meta that emitHeader writes as the YAML parser does', () => {
    const text = emitHeader(richFields);
    expect(parseHeader(text)).toEqual(parseGeneric(text));
    expect(parseHeader(text).parents).toEqual([{ msg_id: 'MSG-0', kind: 'source_run_event' }, { msg_id: 'MSG-00' }]);
    expect(parseHeader(text).meta?.quoted).toBe('"q"');
    // layouts the fast path leaves to YAML read the same
    const nested = emitHeader({ ...richFields, parents: [{ msg_id: 'MSG-0', meta: { k: 'v' } }], meta: { 'odd key': 'multi\nline' } });
    expect(parseHeader(nested)).toEqual(parseGeneric(nested));
    expect(parseHeader(nested).parents).toEqual([{ msg_id: 'MSG-0', meta: { k: 'v' } }]);
  });

  it('does not load the yaml package for the headers emitHeader writes (bus read start-up)', () => {
    let loaded = false;
    jest.isolateModules(() => {
      jest.doMock('yaml', () => {
        loaded = true;
        return jest.requireActual('yaml');
      });
      const header = require('@app/messagebus/header') as typeof import('@app/messagebus/header');
      expect(header.parseHeader(header.emitHeader(richFields)).links).toHaveLength(2);
    });
    expect(loaded).toBe(false);
  });

  it('rejects YAML that is not a mapping', () => {
    expect(() => parseHeader('- a\n- b\n')).toThrow();
    expect(() => parseHeader('key: [unclosed\n')).toThrow();
  });
});

describe('body escaping (D9)', () => {
  const bodies = ['---', '\\---', '\\\\---\r', '---\r\r', 'a\n---\nb', '--- not a fence', 'x---', '', '\n', 'a\n', 'tail\n\n', '✓ ünïcode\n---\n'];

  it.each(bodies.map((b) => [JSON.stringify(b), b]))('%s round-trips through escape/unescape', (_name, body) => {
    expect(unescapeBody(escapeBody(body))).toBe(body);
  });

  it('leaves no line that an upstream reader would take for a fence', () => {
    for (const body of bodies) {
      const lines = escapeBody(body).split('\n');
      expect(lines.filter((l) => l.replace(/\r+$/, '') === '---')).toEqual([]);
    }
  });

  it('writes a body ending in one newline as upstream does, flagged so that it reads back exactly', () => {
    const { msg, entry } = prepareMessage({ type: 'INFO', project_id: 'p', task_id: '', run_id: '', body: 'a\n' });
    expect(entry.endsWith('trailing_newline: kept\n---\na\n')).toBe(true);
    expect(parseBus(Buffer.from(entry))).toEqual([expect.objectContaining({ msg_id: msg.msg_id, body: 'a\n' })]);
    expect(serializeEntry({ msgId: 'M', tsText: 'T', type: 'X', projectId: 'p', taskId: '', runId: '' }, '---')).toContain('---\n\\---\n');
  });
});

describe('prepareMessage validation', () => {
  const base = { type: 'INFO', project_id: 'p', task_id: '', run_id: '', body: '' };

  it('requires type and project', () => {
    expect(() => prepareMessage({ ...base, type: ' ' })).toThrow('message type is empty');
    expect(() => prepareMessage({ ...base, project_id: '' })).toThrow('project id is empty');
  });

  it('refuses bodies over the given limit with a pointer to links', () => {
    expect(() => prepareMessage({ ...base, body: 'x'.repeat(64 * 1024 + 1) }, 64 * 1024)).toThrow(/over the 65536-byte limit.*links/);
    expect(prepareMessage({ ...base, body: 'x'.repeat(64 * 1024) }, 64 * 1024).msg.body).toHaveLength(65536);
  });

  it('sets issue_id of ISSUE messages to their msg_id and keeps caller timestamps in UTC', () => {
    const { msg, entry } = prepareMessage({ ...base, type: 'ISSUE', ts: new Date('2026-03-01T10:00:00.120+01:00') });
    expect(msg.issue_id).toBe(msg.msg_id);
    expect(entry).toContain('ts: 2026-03-01T09:00:00.12Z\n');
  });
});
