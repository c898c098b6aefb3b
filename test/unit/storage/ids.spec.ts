import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  MAX_ID_LENGTH,
  generateTaskId,
  newRunId,
  RunsLayout,
  runIdTime,
  StorageError,
  TASK_ID_PATTERN,
  validateIdentifier,
  validateProjectId,
  validateRunId,
  validateTaskId,
} from '@app/storage';
import { makeTempDir } from './helpers/temp';

function errorOf(fn: () => unknown): StorageError {
  try {
    fn();
  } catch (err) {
    return err as StorageError;
  }
  throw new Error('expected a StorageError');
}

describe('project ids', () => {
  it.each(['a', 'my-project', 'p1', 'a-b-c-9'])('accepts %s', (id) => {
    expect(validateProjectId(id)).toBe(id);
  });

  it.each([
    ['', 'project ID is empty'],
    ['  ', 'project ID is empty'],
    ['a/b', 'invalid project ID "a/b": must not contain path separators (projects cannot be nested)'],
    ['..\\x', 'invalid project ID "..\\\\x": must not contain path separators (projects cannot be nested)'],
    ['..', 'invalid project ID "..": must not be a relative path reference'],
    ['.', 'invalid project ID ".": must not be a relative path reference'],
    ['a\0b', 'invalid project ID "a\\u0000b": must not contain null bytes'],
    ['My-Project', 'invalid project ID "My-Project": must contain only lowercase letters, digits, and hyphens (e.g. my-project)'],
    ['-lead', 'invalid project ID "-lead": must contain only lowercase letters, digits, and hyphens (e.g. my-project)'],
    ['trail-', 'invalid project ID "trail-": must contain only lowercase letters, digits, and hyphens (e.g. my-project)'],
  ])('rejects %j with the upstream message', (id, message) => {
    const err = errorOf(() => validateProjectId(id));
    expect(err).toBeInstanceOf(StorageError);
    expect(err.code).toBe('INVALID_ID');
    expect(err.message).toBe(message);
  });
});

describe('task ids', () => {
  it.each(['task-20260220-153045-my-feature', 'task-00000000-000000-abc', `task-20260101-000000-a${'b'.repeat(48)}c`])('accepts %s', (id) => {
    expect(validateTaskId(id)).toBe(id);
  });

  it.each([
    'task-20260220-153045-ab',
    'task-20260220-153045--abc',
    'task-20260220-153045-abc-',
    'task-20260220-153045-ABC',
    `task-20260101-000000-a${'b'.repeat(49)}c`,
    'task-2026022-153045-abc',
    'task-20260220-153045-../../etc',
    '../task-20260220-153045-abc',
    'task-20260220-153045-abc/x',
  ])('rejects %s', (id) => {
    const err = errorOf(() => validateTaskId(id));
    expect(err.code).toBe('INVALID_ID');
    expect(err.message).toBe(
      `invalid task ID ${JSON.stringify(id)}: must match task-<YYYYMMDD>-<HHMMSS>-<slug>, the slug 3-50 characters of a-z, 0-9 and '-', starting and ending with a letter or digit (e.g. task-20260220-153045-my-feature)`,
    );
  });

  it('generates task-<UTC date>-<UTC time>-<6 chars> ids that validate', () => {
    const id = generateTaskId(new Date('2026-02-20T15:30:45.999Z'));
    expect(id).toMatch(/^task-20260220-153045-[a-z0-9]{6}$/);
    expect(TASK_ID_PATTERN.test(id)).toBe(true);
  });
});

describe('run ids', () => {
  it('formats YYYYMMDD-HHMMSS0000-<pid>-<seq> with a per-process sequence', () => {
    const now = new Date('2026-02-23T20:49:19.500Z');
    const a = newRunId(now);
    const b = newRunId(now);
    const re = new RegExp(`^20260223-2049190000-${process.pid}-(\\d+)$`);
    expect(a).toMatch(re);
    expect(Number(re.exec(b)?.[1])).toBe(Number(re.exec(a)?.[1]) + 1);
    expect(runIdTime(a)?.toISOString()).toBe('2026-02-23T20:49:19.000Z');
    expect(runIdTime('run_20260101-010203-77')?.toISOString()).toBe('2026-01-01T01:02:03.000Z');
  });

  it.each(['20260223-2049190000-67952-1', 'run_20260101-010203-77', '20260223-2049190000-1-2-123456'])('accepts %s', (id) => {
    expect(validateRunId(id)).toBe(id);
  });

  it.each(['', '..', '../x', 'a/b', 'a\\b', '/etc', 'a..b', '*', 'run?', '[x]', '.hidden', 'a b'])('rejects %j', (id) => {
    expect(errorOf(() => validateRunId(id)).code).toBe('INVALID_ID');
  });
});

describe('API identifier rule', () => {
  it.each([
    ['', 'project_id is required'],
    ['a/b', 'project_id must not contain path separators'],
    ['a%2Fb', 'project_id must not contain path separators'],
    ['a..b', 'project_id must not contain ..'],
    ['%2e%2e', 'project_id must not contain ..'],
  ])('%j → %s', (value, message) => {
    expect(errorOf(() => validateIdentifier(value, 'project_id')).message).toBe(message);
  });

  it('returns the trimmed value', () => {
    expect(validateIdentifier('  p1 ', 'project_id')).toBe('p1');
  });
});

describe('RunsLayout', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => (tmp = makeTempDir()));
  afterEach(() => tmp.cleanup());

  it('builds the documented tree', () => {
    const l = new RunsLayout(tmp.dir);
    const t = 'task-20260101-000000-abc';
    expect(l.projectDir('p')).toBe(join(tmp.dir, 'p'));
    expect(l.taskDir('p', t)).toBe(join(tmp.dir, 'p', t));
    expect(l.runsDir('p', t)).toBe(join(tmp.dir, 'p', t, 'runs'));
    expect(l.runDir('p', t, 'r1')).toBe(join(tmp.dir, 'p', t, 'runs', 'r1'));
    expect(l.projectBus('p')).toBe(join(tmp.dir, 'p', 'PROJECT-MESSAGE-BUS.md'));
    expect(l.taskBus('p', t)).toBe(join(tmp.dir, 'p', t, 'TASK-MESSAGE-BUS.md'));
  });

  it.each([
    ['project', (l: RunsLayout) => l.projectDir('..')],
    ['project', (l: RunsLayout) => l.projectDir('../outside')],
    ['project', (l: RunsLayout) => l.projectDir('/etc')],
    ['task', (l: RunsLayout) => l.taskDir('p', '../../escape')],
    ['task', (l: RunsLayout) => l.taskBus('p', '..')],
    ['run', (l: RunsLayout) => l.runDir('p', 'task-20260101-000000-abc', '../../../x')],
  ])('refuses a %s path escape before touching the disk', (_what, fn) => {
    const l = new RunsLayout(tmp.dir);
    expect(errorOf(() => fn(l)).code).toBe('INVALID_ID');
  });

  it('allocates run folders with mode 0755 and distinct ids', () => {
    const l = new RunsLayout(tmp.dir);
    const t = 'task-20260101-000000-abc';
    const a = l.allocateRunDir('p', t);
    const b = l.allocateRunDir('p', t);
    expect(a.runId).not.toBe(b.runId);
    expect(statSync(a.dir).isDirectory()).toBe(true);
    expect(statSync(a.dir).mode & 0o777).toBe(0o755 & ~process.umask());
    expect(a.dir).toBe(l.runDir('p', t, a.runId));
  });

  it('falls back to <id>-<random digits> when the folder already exists', () => {
    const l = new RunsLayout(tmp.dir);
    const t = 'task-20260101-000000-abc';
    const now = new Date('2026-03-01T10:00:00Z');
    const probe = l.allocateRunDir('p', t, now);
    const seq = Number(probe.runId.split('-').pop());
    // Pre-create the folder the next allocation would pick.
    const next = `20260301-1000000000-${process.pid}-${seq + 1}`;
    mkdirSync(l.runDir('p', t, next));
    const got = l.allocateRunDir('p', t, now);
    expect(got.runId).toMatch(new RegExp(`^20260301-1000000000-${process.pid}-\\d{9}$`));
    expect(existsSync(got.dir)).toBe(true);
  });

  it('validates ids when allocating', () => {
    const l = new RunsLayout(tmp.dir);
    expect(errorOf(() => l.allocateRunDir('Bad', 'task-20260101-000000-abc')).code).toBe('INVALID_ID');
    expect(errorOf(() => l.allocateRunDir('p', 'not-a-task')).code).toBe('INVALID_ID');
    expect(existsSync(join(tmp.dir, 'Bad'))).toBe(false);
  });
});

describe('id length and control characters (issue #10)', () => {
  it('caps every id rule at MAX_ID_LENGTH, well under NAME_MAX', () => {
    expect(MAX_ID_LENGTH).toBeLessThanOrEqual(128);
    const long = 'a'.repeat(MAX_ID_LENGTH + 1);
    expect(() => validateProjectId(long)).toThrow(`project ID is ${MAX_ID_LENGTH + 1} characters long, over the ${MAX_ID_LENGTH}-character limit`);
    expect(() => validateRunId(long)).toThrow(/over the 128-character limit/);
    expect(() => validateIdentifier(long, 'project_id')).toThrow('project_id is 129 characters long, over the 128-character limit');
    expect(() => validateTaskId(`task-20260101-120000-${'a'.repeat(200)}`)).toThrow(/over the 128-character limit/);
    expect(validateProjectId('a'.repeat(MAX_ID_LENGTH))).toBe('a'.repeat(MAX_ID_LENGTH));
  });

  it('refuses control characters instead of trimming them away', () => {
    for (const bad of ['p\n', '\tp', 'p\u001b[1m', 'p\u2028']) {
      expect(() => validateIdentifier(bad, 'project_id')).toThrow('project_id must not contain control characters');
    }
    expect(validateIdentifier('  p  ', 'project_id')).toBe('p');
  });
});
