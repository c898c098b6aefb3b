import { parseBus } from '@app/messagebus';
import { mkdtempSync, readFileSync, rmSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BusWriter } from '@app/messagebus';
import { applyRecord, decodeRecord, decodeQueuedTask, decodeRoutedWrite, recordHeaders, splitEntries, validateHostId, type ChangeRecord } from '@app/scaleout';

const P = 'proj';
const T = 'task-20260101-000000-abc';
const rec = (r: Partial<ChangeRecord>): ChangeRecord => ({ path: `${P}/${T}/TASK-MESSAGE-BUS.md`, op: 'append', offset: 0, data: Buffer.alloc(0), ...r });

describe('change records', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'replica-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('round-trips through headers and validates the path against the subject', () => {
    const r = rec({ data: Buffer.from('x'), offset: 7 });
    const back = decodeRecord(recordHeaders(r), r.data, P, T);
    expect(back).toEqual(r);
    for (const path of [`${P}/../etc/passwd`, `/${P}/${T}/x`, `other/${T}/x`, `${P}/task-20260101-000000-zzz/x`, `${P}/${T}`, `${P}/${T}/a b`]) {
      expect(() => decodeRecord(recordHeaders(rec({ path })), Buffer.alloc(0), P, T)).toThrow(/invalid change record/);
    }
    expect(() => decodeRecord(recordHeaders(rec({ op: 'rm' as never })), Buffer.alloc(0), P, T)).toThrow(/unknown op/);
    expect(() => decodeRecord(recordHeaders(rec({})), Buffer.alloc(0), 'Bad_Project', T)).toThrow(/invalid change record/);
    // the project token only carries entries of the project bus
    expect(() => decodeRecord(recordHeaders(rec({ path: `${P}/PROJECT-MESSAGE-BUS.md`, op: 'put' })), Buffer.alloc(0), P, '_project')).toThrow(/project records/);
    expect(decodeRecord(recordHeaders(rec({ path: `${P}/PROJECT-MESSAGE-BUS.md`, op: 'entries' })), Buffer.alloc(0), P, '_project').op).toBe('entries');
  });

  it('applies appends by offset: replays and overlaps are skipped, gaps are refused', () => {
    const file = join(root, P, T, 'TASK-MESSAGE-BUS.md');
    expect(applyRecord(root, rec({ offset: 0, data: Buffer.from('hello ') }))).toBe(true);
    expect(applyRecord(root, rec({ offset: 0, data: Buffer.from('hello ') }))).toBe(false);
    expect(applyRecord(root, rec({ offset: 3, data: Buffer.from('lo world') }))).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('hello world');
    expect(() => applyRecord(root, rec({ offset: 20, data: Buffer.from('!') }))).toThrow(/offset 20/);
    // bytes that differ from what the replica holds are a divergence, never silently skipped
    expect(() => applyRecord(root, rec({ offset: 6, data: Buffer.from('WORLD!') }))).toThrow(/diverged/);
    expect(readFileSync(file, 'utf8')).toBe('hello world');
  });

  it('applies puts and deletes idempotently', () => {
    const path = `${P}/${T}/runs/r1/run-info.yaml`;
    expect(applyRecord(root, rec({ path, op: 'put', data: Buffer.from('a: 1\n') }))).toBe(true);
    expect(applyRecord(root, rec({ path, op: 'put', data: Buffer.from('a: 1\n') }))).toBe(false);
    expect(applyRecord(root, rec({ path, op: 'put', data: Buffer.from('a: 2\n') }))).toBe(true);
    expect(readFileSync(join(root, path), 'utf8')).toBe('a: 2\n');
    expect(applyRecord(root, rec({ path, op: 'delete' }))).toBe(true);
    expect(existsSync(join(root, path))).toBe(false);
    expect(applyRecord(root, rec({ path, op: 'delete' }))).toBe(false);
  });

  it('merges project-bus entries from several hosts once each', async () => {
    const src = mkdtempSync(join(tmpdir(), 'bus-'));
    try {
      const a = join(src, 'a.md');
      const b = join(src, 'b.md');
      await new BusWriter(a).append({ type: 'FACT', project_id: P, task_id: 't1', run_id: '', body: 'from host a' });
      await new BusWriter(b).append({ type: 'FACT', project_id: P, task_id: 't2', run_id: '', body: 'from host b' });
      const path = `${P}/PROJECT-MESSAGE-BUS.md`;
      mkdirSync(join(root, P), { recursive: true });
      for (const f of [a, b, a]) applyRecord(root, rec({ path, op: 'entries', data: readFileSync(f) }));
      const text = readFileSync(join(root, path), 'utf8');
      // one separator newline between the hosts' entries, as BusWriter writes between its own
      expect(text).toBe(readFileSync(a, 'utf8') + '\n' + readFileSync(b, 'utf8'));
      expect(parseBus(Buffer.from(text)).map((m) => m.body)).toEqual(parseBus(readFileSync(a)).concat(parseBus(readFileSync(b))).map((m) => m.body));
    } finally {
      rmSync(src, { recursive: true, force: true });
    }
  });
});

describe('project-bus entries resent by a snapshot', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'replica-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('appends only the entries the replica misses, each once', async () => {
    const src = mkdtempSync(join(tmpdir(), 'bus-'));
    try {
      const a = join(src, 'a.md');
      const w = new BusWriter(a);
      for (const body of ['one', 'two', 'three']) await w.append({ type: 'FACT', project_id: P, task_id: 't1', run_id: '', body });
      const whole = readFileSync(a);
      const path = `${P}/PROJECT-MESSAGE-BUS.md`;
      mkdirSync(join(root, P), { recursive: true });
      const entries = splitEntries(whole);
      expect(entries.map((e) => e.text).join('\n')).toBe(whole.toString('utf8'));
      // the replica got only the first entry, then the whole file comes again (twice)
      applyRecord(root, rec({ path, op: 'entries', data: Buffer.from(entries[0].text) }));
      expect(applyRecord(root, rec({ path, op: 'entries', data: whole }))).toBe(true);
      expect(applyRecord(root, rec({ path, op: 'entries', data: whole }))).toBe(false);
      expect(readFileSync(join(root, path)).equals(whole)).toBe(true);
    } finally {
      rmSync(src, { recursive: true, force: true });
    }
  });
});

describe('queue and control messages', () => {
  const ok = { projectId: P, taskId: T, runId: '20260101-0000000000-1-1', prompt: 'do it' };
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o));

  it('accepts a valid task and rejects ids that could escape the runs root', () => {
    expect(decodeQueuedTask(enc({ ...ok, agent: 'codex', env: { A: 'b' } }))).toMatchObject({ ...ok, agent: 'codex', env: { A: 'b' }, resume: false });
    expect(() => decodeQueuedTask(Buffer.from('{'))).toThrow(/not JSON/);
    expect(() => decodeQueuedTask(enc({ ...ok, projectId: '../x' }))).toThrow(/project ID/);
    expect(() => decodeQueuedTask(enc({ ...ok, taskId: 'x/../../y' }))).toThrow();
    expect(() => decodeQueuedTask(enc({ ...ok, runId: '../r' }))).toThrow();
    expect(() => decodeQueuedTask(enc({ ...ok, env: { A: 1 } }))).toThrow(/env values/);
    expect(() => decodeQueuedTask(enc({ projectId: P, taskId: T }))).toThrow(/needs/);
  });

  it('checks what a new task carries to its worker: depends_on, settings, thread link', () => {
    const parent = { project_id: P, task_id: T, run_id: '20260101-0000000000-1-1', msg_id: 'MSG-20260101-000000-000000001-PID00001-0001', type: 'QUESTION' };
    const thread = { parent, childMsgId: 'MSG-20260101-000000-000000002-PID00001-0002', linkedAt: '2026-01-01T00:00:00.5Z' };
    const other = 'task-20260101-000000-other';
    expect(decodeQueuedTask(enc({ ...ok, dependsOn: [other, ` ${other}`], settings: { max_tokens: 10, max_wall_time: 60_000 }, thread }))).toMatchObject({
      dependsOn: [other],
      settings: { max_tokens: 10, max_wall_time_ms: 60_000 },
      thread,
    });
    expect(() => decodeQueuedTask(enc({ ...ok, dependsOn: '../x' }))).toThrow(/dependsOn must be a list/);
    expect(() => decodeQueuedTask(enc({ ...ok, dependsOn: [T] }))).toThrow(/depend on itself|itself/);
    expect(() => decodeQueuedTask(enc({ ...ok, settings: { max_tokens: -1 } }))).toThrow();
    expect(() => decodeQueuedTask(enc({ ...ok, thread: { ...thread, parent: { ...parent, task_id: '../x' } } }))).toThrow();
    expect(() => decodeQueuedTask(enc({ ...ok, thread: { ...thread, parent: { ...parent, type: 'USER' } } }))).toThrow(/invalid thread link/);
    expect(() => decodeQueuedTask(enc({ ...ok, thread: { ...thread, childMsgId: 'x\nmsg_id: y' } }))).toThrow(/invalid thread link/);
    expect(() => decodeQueuedTask(enc({ ...ok, thread: { ...thread, linkedAt: 'now\nparent_task_id: x' } }))).toThrow(/invalid thread link/);
  });

  it('accepts routed task writes of the known ops with valid ids only', () => {
    const ok = { writeId: 'w1', replyTo: '_INBOX.abc.def', write: { op: 'post', projectId: P, taskId: T, type: 'USER', body: 'hi' } };
    expect(decodeRoutedWrite(enc(ok))).toMatchObject({ writeId: 'w1', write: { op: 'post', body: 'hi' } });
    expect(decodeRoutedWrite(enc({ writeId: 'w2', write: { op: 'stop-run', projectId: P, taskId: T, runId: '20260101-0000000000-1-1', stoppedBy: 'api' } })).write.op).toBe('stop-run');
    expect(() => decodeRoutedWrite(enc({ ...ok, write: { ...ok.write, taskId: '../x' } }))).toThrow(/invalid task write/);
    expect(() => decodeRoutedWrite(enc({ ...ok, write: { ...ok.write, op: 'exec' } }))).toThrow(/unknown op/);
    expect(() => decodeRoutedWrite(enc({ ...ok, write: { ...ok.write, body: 3 } }))).toThrow(/body must be a string/);
    expect(() => decodeRoutedWrite(enc({ ...ok, write: { op: 'stop-run', projectId: P, taskId: T, stoppedBy: 'x' } }))).toThrow(/needs a runId/);
    expect(() => decodeRoutedWrite(enc({ ...ok, writeId: 'a b' }))).toThrow(/writeId/);
    expect(() => decodeRoutedWrite(enc({ ...ok, write: { ...ok.write, meta: { a: 1 } } }))).toThrow(/meta has the wrong type/);
    expect(() => decodeRoutedWrite(enc({ ...ok, write: { ...ok.write, parents: [{ id: 'x' }] } }))).toThrow(/parents has the wrong type/);
    expect(() => decodeRoutedWrite(enc({ ...ok, write: { op: 'stop-task', projectId: P, taskId: T, stoppedBy: 'x', graceMs: -1 } }))).toThrow(/graceMs has the wrong type/);
    expect(() => decodeRoutedWrite(enc({ ...ok, replyTo: 'conductor.tasks.p' }))).toThrow(/replyTo/);
  });

  it('host ids are subject tokens', () => {
    expect(validateHostId('w-1')).toBe('w-1');
    for (const bad of ['', 'W1', 'a.b', 'a*', 'a>', '-x', 'x'.repeat(64)]) expect(() => validateHostId(bad)).toThrow(/invalid worker host id/);
  });
});
