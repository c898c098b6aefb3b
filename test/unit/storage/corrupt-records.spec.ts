import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  blockedBy,
  parseRunInfo,
  readRunInfoReconciled,
  RunInfo,
  RunsLayout,
  serializeRunInfo,
  StorageError,
  StorageIndex,
  updateRunInfo,
  writeRunInfo,
  writeRunInfoAsync,
} from '@app/storage';
import { makeTempDir } from './helpers/temp';

const BAD: [string, string | Buffer, RegExp][] = [
  ['garbage bytes', Buffer.from([0x00, 0xff, 0x3a, 0x20, 0x5b, 0x7b, 0x0a, 0x89, 0x22]), /unmarshal run-info/],
  ['a YAML list', '- a\n- b\n', /not a mapping \(a list\)/],
  ['a scalar', 'just words\n', /not a mapping \(a scalar\)/],
  ['a syntax error', 'run_id: [unclosed\n', /unmarshal run-info/],
  ['a list where a number belongs', 'status: completed\npid: [1, 2]\n', /pid must be an integer/],
  ['a word where a number belongs', 'status: completed\nexit_code: zero\n', /exit_code must be an integer/],
  ['a mapping where a string belongs', 'status: completed\nagent: {a: 1}\n', /agent must be a scalar, got a mapping/],
  ['a status nobody writes', 'status: 42\n', /status "42" is not one of/],
  ['usage that is not a mapping', 'status: completed\nusage: lots\n', /usage must be a mapping/],
];

const full = (over: Partial<RunInfo> = {}): RunInfo => ({
  version: 1,
  run_id: 'r1',
  project_id: 'p',
  task_id: 'task-20260101-120000-abc',
  agent: 'claude',
  agent_name: 'fast',
  pid: 12,
  pgid: 12,
  start_time: new Date('2026-01-01T12:00:00.123Z'),
  end_time: new Date('2026-01-01T12:01:00Z'),
  exit_code: 1,
  status: 'failed',
  agent_version: '1.2.3',
  cwd: '/tmp/x y',
  error_summary: 'it: broke "badly"',
  commandline: "claude -p --flag 'x'",
  resume_at: new Date('2026-01-01T13:00:00Z'),
  session_id: 'abc-123',
  usage: { input_tokens: 10, output_tokens: 5, cache_read_tokens: 1, cache_write_tokens: 0, cost_usd: 0.25 },
  ...over,
});

describe('corrupt run-info records (issue #29)', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => (tmp = makeTempDir('corrupt-')));
  afterEach(() => tmp.cleanup());

  const runPath = (root: string, task: string, run: string) => {
    const dir = join(root, 'p', task, 'runs', run);
    mkdirSync(dir, { recursive: true });
    return join(dir, 'run-info.yaml');
  };

  it.each(BAD)('%s: parseRunInfo throws CORRUPT with the reason', (_name, text, reason) => {
    let err: unknown;
    try {
      parseRunInfo(text.toString(), '/r/run-info.yaml');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).code).toBe('CORRUPT');
    expect((err as StorageError).message).toMatch(reason);
    expect((err as StorageError).message).not.toContain('\n');
  });

  it('every record we write still parses (no false corrupt), the quoted and the plain forms', () => {
    for (const info of [full(), full({ status: 'running', exit_code: -1 }), full({ status: 'completed', exit_code: 0, usage: undefined })]) {
      expect(parseRunInfo(serializeRunInfo(info)).status).toBe(info.status);
    }
    expect(parseRunInfo('status: "completed"\npid: "12"\nstart_time: 2026-01-01T12:00:00Z\n').pid).toBe(12);
    expect(parseRunInfo('').status).toBe('unknown');
  });

  it.each(BAD)('%s: readers show the run as corrupt with the reason and leave the file as it is', (_name, text, reason) => {
    const path = runPath(tmp.dir, 'task-20260101-120000-abc', 'run-1');
    writeFileSync(path, text);
    const info = readRunInfoReconciled(path);
    expect(info).toMatchObject({ status: 'corrupt', run_id: 'run-1', task_id: 'task-20260101-120000-abc', project_id: 'p' });
    expect(info.corrupt_reason).toMatch(reason);
    expect(readFileSync(path)).toEqual(Buffer.from(text));
  });

  it('the index lists the corrupt run beside the good ones, also from a fresh index', () => {
    const layout = new RunsLayout(tmp.dir);
    writeFileSync(runPath(tmp.dir, 'task-20260101-120000-abc', 'run-1'), '- a\n');
    writeRunInfo(runPath(tmp.dir, 'task-20260101-120000-abc', 'run-2'), full({ run_id: 'run-2', pid: 0, pgid: 0 }));
    for (const index of [new StorageIndex(layout), new StorageIndex(layout)]) {
      expect(index.runInfos('p').map((i) => [i.run_id, i.status])).toEqual([
        ['run-1', 'corrupt'],
        ['run-2', 'failed'],
      ]);
      expect(index.allRunInfos()).toHaveLength(2);
    }
  });

  it('writers never put the corrupt view over the file, and a locked update of a corrupt file fails', async () => {
    const path = runPath(tmp.dir, 'task-20260101-120000-abc', 'run-1');
    writeFileSync(path, 'just words\n');
    const view = readRunInfoReconciled(path);
    expect(() => writeRunInfo(path, view)).toThrow(/refusing to write the corrupt view/);
    await expect(writeRunInfoAsync(path, view)).rejects.toMatchObject({ code: 'CORRUPT' });
    await expect(updateRunInfo(path, (i) => ({ ...i, status: 'failed' }))).rejects.toMatchObject({ code: 'CORRUPT' });
    expect(readFileSync(path, 'utf8')).toBe('just words\n');
  });
});

describe('a dependency with a corrupt run-info (issue #29)', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => (tmp = makeTempDir('corrupt-dep-')));
  afterEach(() => tmp.cleanup());

  it('blocks its dependents instead of failing their listing', () => {
    const dep = 'task-20260101-120000-dep';
    const dir = join(tmp.dir, 'p', dep, 'runs', 'run-1');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'run-info.yaml'), '- not a record\n');
    expect(blockedBy(tmp.dir, 'p', [dep])).toEqual([dep]);
  });
});
