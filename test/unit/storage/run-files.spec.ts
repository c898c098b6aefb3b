import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { folderSize, listFolderNames, newRunInfo, ZERO_TIME, readRunInfo, RunsLayout, runInfoFile, runInfoIn, runFilePaths, runOutputFile, taskRunsDir, writeRunInfo } from '@app/storage';

describe('run folder file names (one place)', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'run-files-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('builds the same paths as RunsLayout for a real run folder', () => {
    const layout = new RunsLayout(root);
    const { runId, dir } = layout.allocateRunDir('proj', 'task-20260101-000000-abc');
    expect(runInfoFile(dir)).toBe(layout.runInfoPath('proj', 'task-20260101-000000-abc', runId));
    expect(taskRunsDir(layout.taskDir('proj', 'task-20260101-000000-abc'))).toBe(layout.runsDir('proj', 'task-20260101-000000-abc'));
    expect(runInfoIn(layout.runsDir('proj', 'task-20260101-000000-abc'), runId)).toBe(runInfoFile(dir));
    expect(runOutputFile(dir)).toBe(join(dir, 'output.md'));
  });

  it('newRunInfo: a running record with defaults, given fields on top, undefined keeps the default', () => {
    const layout = new RunsLayout(root);
    const { runId, dir } = layout.allocateRunDir('proj', 'task-20260101-000000-abc');
    const info = newRunInfo({ run_id: runId, project_id: 'proj', task_id: 'task-20260101-000000-abc', agent: 'claude', pid: 42, pgid: undefined, ...runFilePaths(dir) });
    expect(info).toMatchObject({ version: 1, status: 'running', exit_code: -1, pid: 42, pgid: 0, agent_version: '', end_time: ZERO_TIME });
    writeRunInfo(runInfoFile(dir), info);
    const back = readRunInfo(runInfoIn(taskRunsDir(join(root, 'proj', 'task-20260101-000000-abc')), runId));
    expect(back).toMatchObject({ run_id: runId, agent: 'claude', pid: 42, status: 'running', stdout_path: join(dir, 'agent-stdout.txt'), prompt_path: join(dir, 'prompt.md') });
  });

  it('listFolderNames: sorted sub-folders only; undefined for a missing folder', () => {
    mkdirSync(join(root, 'b'));
    mkdirSync(join(root, 'a'));
    writeFileSync(join(root, 'c.txt'), 'x');
    expect(listFolderNames(root)).toEqual(['a', 'b']);
    expect(listFolderNames(join(root, 'missing'))).toBeUndefined();
  });

  it('folderSize: counts nested files and a symlink itself, not its target; 0 for a missing folder', () => {
    mkdirSync(join(root, 'd', 'e'), { recursive: true });
    writeFileSync(join(root, 'd', 'one'), 'x'.repeat(100));
    writeFileSync(join(root, 'd', 'e', 'two'), 'y'.repeat(50));
    const big = join(root, 'big');
    writeFileSync(big, 'z'.repeat(10_000));
    symlinkSync(big, join(root, 'd', 'link'));
    const size = folderSize(join(root, 'd'));
    expect(size).toBeGreaterThanOrEqual(150);
    expect(size).toBeLessThan(150 + 10_000);
    expect(folderSize(join(root, 'missing'))).toBe(0);
  });
});
