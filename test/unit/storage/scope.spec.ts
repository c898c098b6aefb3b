import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  findSourceProjectRoot,
  inferProjectId,
  resolveTaskId,
  scopeFromRunFolder,
  scopeFromRunInfoUpwards,
  scopeFromTaskFolder,
  writeRunInfo,
  ZERO_TIME,
} from '@app/storage';
import { makeTempDir } from './helpers/temp';

describe('scope inference helpers (§0.1)', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => (tmp = makeTempDir()));
  afterEach(() => tmp.cleanup());

  it('derives scope from JRUN_TASK_FOLDER and JRUN_RUN_FOLDER', () => {
    expect(scopeFromTaskFolder('/r/proj/task-20260101-000000-abc')).toEqual({ project: 'proj', task: 'task-20260101-000000-abc', root: '/r' });
    expect(scopeFromRunFolder('/r/proj/t/runs/run-1')).toEqual({ project: 'proj', task: 't', run: 'run-1', root: '/r' });
    expect(scopeFromRunFolder('/r/proj/t/other/run-1')).toBeUndefined();
    expect(scopeFromTaskFolder('')).toBeUndefined();
  });

  it('finds the run-info above the working directory', () => {
    const runDir = join(tmp.dir, 'root', 'proj', 'task-20260101-000000-abc', 'runs', 'r1');
    mkdirSync(join(runDir, 'sub', 'deeper'), { recursive: true });
    writeRunInfo(join(runDir, 'run-info.yaml'), {
      version: 1, run_id: 'r1', project_id: 'proj', task_id: 'task-20260101-000000-abc', agent: 'claude', pid: 1, pgid: 1,
      start_time: new Date(), end_time: ZERO_TIME, exit_code: -1, status: 'running', agent_version: '',
    });
    expect(scopeFromRunInfoUpwards(join(runDir, 'sub', 'deeper'))).toEqual({
      project: 'proj', task: 'task-20260101-000000-abc', run: 'r1', root: join(tmp.dir, 'root'),
    });
  });

  it('infers the project from JRUN_PROJECT_ID, a project home, or home-folders.md', () => {
    const root = join(tmp.dir, 'root');
    mkdirSync(root);
    expect(inferProjectId({ env: { JRUN_PROJECT_ID: 'from-env' }, cwd: tmp.dir, root })).toBe('from-env');
    const home = join(tmp.dir, 'my-proj');
    mkdirSync(join(home, 'task-20260101-000000-abc'), { recursive: true });
    expect(inferProjectId({ env: {}, cwd: home, root })).toBe('my-proj');
    const src = join(tmp.dir, 'src', 'app');
    mkdirSync(join(src, 'lib'), { recursive: true });
    writeFileSync(join(src, 'package.json'), '{}');
    expect(findSourceProjectRoot(join(src, 'lib'))).toBe(src);
    expect(inferProjectId({ env: {}, cwd: join(src, 'lib'), root })).toBeUndefined();
    mkdirSync(join(root, 'linked'));
    writeFileSync(join(root, 'linked', 'home-folders.md'), `project_root: ${src}\n`);
    expect(inferProjectId({ env: {}, cwd: join(src, 'lib'), root })).toBe('linked');
  });

  it('generates or validates task ids', () => {
    const gen = resolveTaskId(undefined, new Date('2026-05-06T07:08:09Z'));
    expect(gen.generated).toBe(true);
    expect(gen.taskId).toMatch(/^task-20260506-070809-[a-z0-9]{6}$/);
    expect(resolveTaskId(' task-20260101-000000-abc ')).toEqual({ taskId: 'task-20260101-000000-abc', generated: false });
    expect(() => resolveTaskId('../escape')).toThrow(/invalid task ID/);
  });
});
