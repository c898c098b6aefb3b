import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  blockedBy,
  isCancelled,
  isTaskDone,
  normalizeDependsOn,
  readDependsOn,
  readStopRequested,
  readTaskPrompt,
  removeDone,
  validateNoDependencyCycle,
  writeCancelled,
  writeDependsOn,
  writeDone,
  writeRunInfo,
  writeStopRequested,
  writeTaskPromptIfAbsent,
  ZERO_TIME,
} from '@app/storage';
import { makeTempDir } from './helpers/temp';

describe('task files', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  let taskDir: string;
  beforeEach(() => {
    tmp = makeTempDir();
    taskDir = join(tmp.dir, 'p', 'task-20260101-000000-aaa');
    mkdirSync(taskDir, { recursive: true });
  });
  afterEach(() => tmp.cleanup());

  it('writes TASK.md = prompt + newline only when absent', () => {
    expect(readTaskPrompt(taskDir)).toBeUndefined();
    expect(writeTaskPromptIfAbsent(taskDir, 'do it')).toBe(true);
    expect(writeTaskPromptIfAbsent(taskDir, 'other')).toBe(false);
    expect(readFileSync(join(taskDir, 'TASK.md'), 'utf8')).toBe('do it\n');
    expect(readTaskPrompt(taskDir)).toBe('do it\n');
  });

  it('handles DONE as an empty marker file; a DONE directory is an error', () => {
    expect(isTaskDone(taskDir)).toBe(false);
    writeDone(taskDir);
    expect(readFileSync(join(taskDir, 'DONE'), 'utf8')).toBe('');
    expect(isTaskDone(taskDir)).toBe(true);
    expect(removeDone(taskDir)).toBe(true);
    expect(removeDone(taskDir)).toBe(false);
    mkdirSync(join(taskDir, 'DONE'));
    expect(() => isTaskDone(taskDir)).toThrow(/DONE marker is a directory/);
  });

  it('normalises depends_on like upstream', () => {
    expect(normalizeDependsOn('t0', [' a , b', 'b', '', 'c,,a'])).toEqual(['a', 'b', 'c']);
    expect(() => normalizeDependsOn('t0', ['../x'])).toThrow('dependency task id "../x" must not contain path separators');
    expect(() => normalizeDependsOn('t0', ['a..b'])).toThrow('dependency task id "a..b" must not contain ..');
    expect(() => normalizeDependsOn('t0', ['x', 't0'])).toThrow('task "t0" cannot depend on itself');
  });

  it('writes TASK-CONFIG.yaml in yaml.v3 layout, reads it back, and deletes it for an empty list', () => {
    writeDependsOn(taskDir, ['task-20260101-000000-bbb', 'task-20260101-000000-ccc']);
    expect(readFileSync(join(taskDir, 'TASK-CONFIG.yaml'), 'utf8')).toBe(
      'depends_on:\n    - task-20260101-000000-bbb\n    - task-20260101-000000-ccc\n',
    );
    expect(readDependsOn(taskDir)).toEqual(['task-20260101-000000-bbb', 'task-20260101-000000-ccc']);
    writeDependsOn(taskDir, []);
    expect(existsSync(join(taskDir, 'TASK-CONFIG.yaml'))).toBe(false);
    expect(readDependsOn(taskDir)).toEqual([]);
  });

  it('reads upstream flow-style depends_on and rejects escapes in it', () => {
    writeFileSync(join(taskDir, 'TASK-CONFIG.yaml'), 'depends_on: [a, "b,c"]\n');
    expect(readDependsOn(taskDir)).toEqual(['a', 'b', 'c']);
    writeFileSync(join(taskDir, 'TASK-CONFIG.yaml'), 'depends_on: [../../etc]\n');
    expect(() => readDependsOn(taskDir)).toThrow(/must not contain path separators/);
  });

  it('writes STOP-REQUESTED as permanent or a UTC RFC3339 time', () => {
    expect(readStopRequested(taskDir)).toBeUndefined();
    writeStopRequested(taskDir, false, new Date('2026-02-01T10:20:30.456Z'));
    expect(readFileSync(join(taskDir, 'STOP-REQUESTED'), 'utf8')).toBe('2026-02-01T10:20:30Z\n');
    expect(readStopRequested(taskDir)).toEqual({ permanent: false, requestedAt: new Date('2026-02-01T10:20:30Z') });
    writeStopRequested(taskDir, true);
    expect(readFileSync(join(taskDir, 'STOP-REQUESTED'), 'utf8')).toBe('permanent\n');
    expect(readStopRequested(taskDir)).toEqual({ permanent: true });
  });

  it('writes CANCELLED with time and reason', () => {
    expect(isCancelled(taskDir)).toBe(false);
    writeCancelled(taskDir, 'not needed', new Date('2026-02-01T10:20:30Z'));
    expect(readFileSync(join(taskDir, 'CANCELLED'), 'utf8')).toBe('cancelled_at: 2026-02-01T10:20:30Z\nreason: not needed\n');
    expect(isCancelled(taskDir)).toBe(true);
  });
});

describe('dependencies', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => (tmp = makeTempDir()));
  afterEach(() => tmp.cleanup());

  function run(task: string, runId: string, status: 'running' | 'completed' | 'failed'): void {
    const dir = join(tmp.dir, 'p', task, 'runs', runId);
    mkdirSync(dir, { recursive: true });
    writeRunInfo(join(dir, 'run-info.yaml'), {
      version: 1, run_id: runId, project_id: 'p', task_id: task, agent: 'claude', pid: 0, pgid: 0,
      start_time: new Date(), end_time: ZERO_TIME, exit_code: 0, status, agent_version: '',
    });
  }

  it('treats DONE, or a completed latest run with nothing running, as ready', () => {
    mkdirSync(join(tmp.dir, 'p', 'done-task'), { recursive: true });
    writeDone(join(tmp.dir, 'p', 'done-task'));
    run('ok-task', 'r1', 'failed');
    run('ok-task', 'r2', 'completed');
    run('failed-task', 'r1', 'completed');
    run('failed-task', 'r2', 'failed');
    run('busy-task', 'r1', 'running');
    run('busy-task', 'r2', 'completed');
    expect(blockedBy(tmp.dir, 'p', ['done-task', 'ok-task', 'failed-task', 'busy-task', 'missing-task'])).toEqual([
      'failed-task',
      'busy-task',
      'missing-task',
    ]);
  });

  it('detects cycles across TASK-CONFIG.yaml files', () => {
    const a = join(tmp.dir, 'p', 'a');
    mkdirSync(a, { recursive: true });
    writeDependsOn(a, ['b']);
    expect(() => validateNoDependencyCycle(tmp.dir, 'p', 'b', ['a'])).toThrow('dependency cycle detected: a -> b -> a');
    expect(() => validateNoDependencyCycle(tmp.dir, 'p', 'b', ['c'])).not.toThrow();
  });

  it('does not read the project for a task without dependencies (it closes no cycle)', () => {
    // a cycle between two other tasks, written by hand: only a task that depends on it can reach it
    for (const [task, dep] of [['c', 'd'], ['d', 'c']]) {
      mkdirSync(join(tmp.dir, 'p', task), { recursive: true });
      writeDependsOn(join(tmp.dir, 'p', task), [dep]);
    }
    expect(() => validateNoDependencyCycle(tmp.dir, 'p', 'b', [])).not.toThrow();
    expect(() => validateNoDependencyCycle(tmp.dir, 'p', 'b', ['c'])).toThrow('dependency cycle detected: c -> d -> c');
  });
});
