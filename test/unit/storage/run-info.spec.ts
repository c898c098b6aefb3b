import { readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  parseRunInfo,
  readRunInfo,
  RunInfo,
  rfc3339Nano,
  runState,
  serializeRunInfo,
  StorageError,
  writeRunInfo,
  yamlString,
  ZERO_TIME,
} from '@app/storage';
import { makeTempDir } from './helpers/temp';

const full: RunInfo = {
  version: 1,
  run_id: '20260223-2049190000-67952-1',
  parent_run_id: '20260223-2049000000-67000-3',
  previous_run_id: '20260223-2048000000-67952-2',
  project_id: 'my-project',
  task_id: 'task-20260223-204900-feature',
  agent: 'claude',
  process_ownership: 'managed',
  pid: 67953,
  pgid: 67953,
  start_time: new Date('2026-02-23T20:49:19.123Z'),
  end_time: new Date('2026-02-23T20:51:02.5Z'),
  exit_code: 1,
  status: 'failed',
  cwd: '/home/me/src',
  prompt_path: '/runs/p/t/runs/r/prompt.md',
  output_path: '/runs/p/t/runs/r/output.md',
  stdout_path: '/runs/p/t/runs/r/agent-stdout.txt',
  stderr_path: '/runs/p/t/runs/r/agent-stderr.txt',
  commandline: 'claude -p --input-format text --output-format stream-json --verbose < /runs/p/t/runs/r/prompt.md',
  error_summary: 'agent reported failure',
  agent_version: '2.1.50 (Claude Code)',
};

describe('run-info.yaml serialisation (yaml.v3 layout)', () => {
  it('writes every field in upstream order, byte for byte', () => {
    expect(serializeRunInfo(full)).toBe(
      [
        'version: 1',
        'run_id: 20260223-2049190000-67952-1',
        'parent_run_id: 20260223-2049000000-67000-3',
        'previous_run_id: 20260223-2048000000-67952-2',
        'project_id: my-project',
        'task_id: task-20260223-204900-feature',
        'agent: claude',
        'process_ownership: managed',
        'pid: 67953',
        'pgid: 67953',
        'start_time: 2026-02-23T20:49:19.123Z',
        'end_time: 2026-02-23T20:51:02.5Z',
        'exit_code: 1',
        'status: failed',
        'cwd: /home/me/src',
        'prompt_path: /runs/p/t/runs/r/prompt.md',
        'output_path: /runs/p/t/runs/r/output.md',
        'stdout_path: /runs/p/t/runs/r/agent-stdout.txt',
        'stderr_path: /runs/p/t/runs/r/agent-stderr.txt',
        'commandline: claude -p --input-format text --output-format stream-json --verbose < /runs/p/t/runs/r/prompt.md',
        'error_summary: agent reported failure',
        'agent_version: 2.1.50 (Claude Code)',
        '',
      ].join('\n'),
    );
  });

  it('omits empty optional fields, keeps agent_version as "" and writes the zero end time', () => {
    const running: RunInfo = {
      version: 1,
      run_id: 'r1',
      project_id: 'p',
      task_id: 't',
      agent: 'codex',
      pid: 10,
      pgid: 10,
      start_time: new Date('2026-01-01T00:00:00Z'),
      end_time: ZERO_TIME,
      exit_code: -1,
      status: 'running',
      error_summary: '',
      agent_version: '',
    };
    expect(serializeRunInfo(running)).toBe(
      'version: 1\nrun_id: r1\nproject_id: p\ntask_id: t\nagent: codex\npid: 10\npgid: 10\n' +
        'start_time: 2026-01-01T00:00:00Z\nend_time: 0001-01-01T00:00:00Z\nexit_code: -1\nstatus: running\nagent_version: ""\n',
    );
  });

  it('round-trips every field', () => {
    expect(parseRunInfo(serializeRunInfo(full))).toEqual(full);
  });

  it.each([
    ['', '""'],
    ['plain text', 'plain text'],
    ['true', '"true"'],
    ['Yes', '"Yes"'],
    ['off', '"off"'],
    ['null', '"null"'],
    ['~', '"~"'],
    ['123', '"123"'],
    ['-1', '"-1"'],
    ['1.5', '"1.5"'],
    ['0x1F', '"0x1F"'],
    ['1_000', '"1_000"'],
    ['1:20', '"1:20"'],
    ['2026-01-02', '"2026-01-02"'],
    ['.inf', '".inf"'],
    ['exit code 1: permission denied', "'exit code 1: permission denied'"],
    ['trailing colon:', "'trailing colon:'"],
    ['- dash', "'- dash'"],
    ['#hash', "'#hash'"],
    ['a #comment', "'a #comment'"],
    ['a#b', 'a#b'],
    [' leading', "' leading'"],
    ['trailing ', "'trailing '"],
    ["it's", "it's"],
    ["'quoted'", "'''quoted'''"],
    ['"dq"', `'"dq"'`],
    ['[x]', "'[x]'"],
    ['{x}', "'{x}'"],
    ['a, b', 'a, b'],
    ['* star', "'* star'"],
    ['tab\there', '"tab\\there"'],
    ['bell\x07', '"bell\\a"'],
    ['ünïcödé ✓', 'ünïcödé ✓'],
    ['---', "'---'"],
    ['line1\nline2', '|-\n    line1\n    line2'],
    ['line1\n', '|\n    line1'],
    ['a\n\nb', '|-\n    a\n\n    b'],
    ['trailing space \nx', '"trailing space \\nx"'],
    ['x\ny ', '"x\\ny "'],
  ])('string %j is written as %s', (value, expected) => {
    expect(yamlString(value)).toBe(expected);
  });

  it.each(['', 'true', 'exit code 1: permission denied', '- dash', "'quoted'", 'tab\there', 'line1\nline2', 'line1\n', 'a\n\nb', 'x\ny ', ' lead'])(
    'string %j reads back unchanged',
    (value) => {
      const text = serializeRunInfo({ ...full, error_summary: value, agent_version: value });
      const back = parseRunInfo(text);
      expect(back.agent_version).toBe(value);
      if (value !== '') expect(back.error_summary).toBe(value);
    },
  );

  it('formats times like Go RFC3339Nano in UTC', () => {
    expect(rfc3339Nano(new Date('2026-02-23T20:49:19.000Z'))).toBe('2026-02-23T20:49:19Z');
    expect(rfc3339Nano(new Date('2026-02-23T20:49:19.120Z'))).toBe('2026-02-23T20:49:19.12Z');
    expect(rfc3339Nano(ZERO_TIME)).toBe('0001-01-01T00:00:00Z');
  });
});

describe('run-info.yaml `starting` (the runner\'s record before its agent exists)', () => {
  const running: RunInfo = { ...full, status: 'running', end_time: ZERO_TIME, exit_code: -1, starting: true };

  it('is written as an added key after the upstream fields and read back (fast path and full YAML)', () => {
    const text = serializeRunInfo(running);
    expect(text.endsWith('\nstarting: true\n')).toBe(true);
    expect(text.indexOf('starting: true')).toBeGreaterThan(text.indexOf('agent_version:'));
    expect(parseRunInfo(text).starting).toBe(true);
    expect(parseRunInfo(`# full parser\n${text}`).starting).toBe(true);
  });

  it('`in_process` (a REST run inside its runner) follows the same rules', () => {
    const rest: RunInfo = { ...running, starting: undefined, in_process: true };
    const text = serializeRunInfo(rest);
    expect(text.endsWith('\nin_process: true\n')).toBe(true);
    expect(parseRunInfo(text).in_process).toBe(true);
    expect(parseRunInfo(`# full parser\n${text}`).in_process).toBe(true);
    expect(serializeRunInfo({ ...rest, status: 'completed' })).not.toContain('in_process');
  });

  it('`queued_reason` (issue #33: a run waiting for admission) is kept only while running, read by both parsers', () => {
    const queued: RunInfo = { ...running, queued_reason: 'queued: children per run limit (1) reached: run r1 has 1 running children (limit set by x)' };
    const text = serializeRunInfo(queued);
    expect(text).toContain('\nqueued_reason: ');
    expect(parseRunInfo(text).queued_reason).toBe(queued.queued_reason);
    expect(parseRunInfo(`# full parser\n${text}`).queued_reason).toBe(queued.queued_reason);
    expect(serializeRunInfo({ ...queued, status: 'completed' })).not.toContain('queued_reason');
    expect(parseRunInfo(text.replace('status: running', 'status: failed')).queued_reason).toBeUndefined();
    expect(runState(parseRunInfo(text))).toBe('queued');
    expect(runState({ ...queued, queued_reason: undefined })).toBe('running');
  });

  it('is never written on a finished record, and absent means false', () => {
    expect(serializeRunInfo({ ...running, status: 'failed' })).not.toContain('starting');
    expect(parseRunInfo(serializeRunInfo({ ...running, starting: undefined })).starting).toBeUndefined();
    expect(parseRunInfo('status: running\nstarting: false\n').starting).toBeUndefined();
  });
});

describe('run-info.yaml `usage.partial` (a REST run cut off mid-stream)', () => {
  it('is written under usage only when set and read back by the fast path and the full parser', () => {
    const usage = { input_tokens: 120, output_tokens: 17, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.0013, partial: true };
    const text = serializeRunInfo({ ...full, usage });
    expect(text).toContain('usage:\n    input_tokens: 120\n    output_tokens: 17\n    cache_read_tokens: 0\n    cache_write_tokens: 0\n    cost_usd: 0.0013\n    partial: true\n');
    expect(parseRunInfo(text).usage).toEqual(usage);
    expect(parseRunInfo(`# full parser\n${text}`).usage).toEqual(usage);
    expect(serializeRunInfo({ ...full, usage: { ...usage, partial: undefined } })).not.toContain('partial');
  });
});

describe('run-info.yaml parsing', () => {
  it('reads files written by upstream (nanoseconds, offsets, unknown keys)', () => {
    const info = parseRunInfo(
      [
        'version: 1',
        'run_id: r',
        'project_id: p',
        'task_id: t',
        'agent: gemini',
        'pid: 5',
        'pgid: 6',
        'start_time: 2026-02-23T20:49:19.123456789Z',
        'end_time: 2026-02-23T22:49:19+02:00',
        'exit_code: 0',
        'status: completed',
        'future_key: whatever',
        'agent_version: "1.0"',
        '',
      ].join('\n'),
    );
    expect(info.start_time.toISOString()).toBe('2026-02-23T20:49:19.123Z');
    expect(info.end_time.toISOString()).toBe('2026-02-23T20:49:19.000Z');
    expect(info.agent_version).toBe('1.0');
    expect(info.pgid).toBe(6);
    expect(info).not.toHaveProperty('future_key');
  });

  it('fills missing ids from the path and maps a missing status to unknown', () => {
    const path = '/root/proj/task-20260101-000000-abc/runs/20260101-0000000000-1-1/run-info.yaml';
    const info = parseRunInfo('version: 1\npid: 3\n', path);
    expect(info.project_id).toBe('proj');
    expect(info.task_id).toBe('task-20260101-000000-abc');
    expect(info.run_id).toBe('20260101-0000000000-1-1');
    expect(info.status).toBe('unknown');
    expect(info.end_time.getTime()).toBe(ZERO_TIME.getTime());
  });

  it('keeps ids that are present even when the path differs', () => {
    const info = parseRunInfo('run_id: own\nproject_id: pp\ntask_id: tt\n', '/r/p/t/runs/x/run-info.yaml');
    expect([info.project_id, info.task_id, info.run_id]).toEqual(['pp', 'tt', 'own']);
  });

  it('throws StorageError for malformed YAML and NOT_FOUND for a missing file', () => {
    expect(() => parseRunInfo('a: [unclosed\n')).toThrow(StorageError);
    expect(() => parseRunInfo('- a list\n')).toThrow(/not a mapping/);
    const tmp = makeTempDir();
    try {
      expect(() => readRunInfo(join(tmp.dir, 'nope.yaml'))).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    } finally {
      tmp.cleanup();
    }
  });
});

describe('writeRunInfo', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => (tmp = makeTempDir()));
  afterEach(() => tmp.cleanup());

  it('writes atomically with mode 0644 and leaves no temp files', () => {
    const path = join(tmp.dir, 'run-info.yaml');
    writeRunInfo(path, full);
    writeRunInfo(path, { ...full, status: 'completed', exit_code: 0 });
    expect(readFileSync(path, 'utf8')).toBe(serializeRunInfo({ ...full, status: 'completed', exit_code: 0 }));
    expect(statSync(path).mode & 0o777).toBe(0o644);
    expect(readdirSync(tmp.dir)).toEqual(['run-info.yaml']);
  });

  it('removes its temp file when the rename fails and reports IO', () => {
    const path = join(tmp.dir, 'run-info.yaml');
    mkdirSync(path); // a directory in the way: rename must fail
    writeFileSync(join(path, 'keep'), 'x');
    expect(() => writeRunInfo(path, full)).toThrow(expect.objectContaining({ code: 'IO' }));
    expect(readdirSync(tmp.dir)).toEqual(['run-info.yaml']);
  });
});
