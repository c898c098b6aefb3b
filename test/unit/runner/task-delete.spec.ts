import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { deleteTaskFolder, findRunningRun } from '@app/runner';
import { newRunInfo, runInfoFile, RunsLayout, writeRunInfo } from '@app/storage';

describe('task delete use case and the running-run lookup (libs/runner)', () => {
  let root: string;
  let layout: RunsLayout;
  const task = 'task-20260101-000000-del';
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'task-delete-'));
    layout = new RunsLayout(root);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function run(status: 'completed' | 'running'): string {
    const { runId, dir } = layout.allocateRunDir('proj', task);
    writeRunInfo(runInfoFile(dir), newRunInfo({ run_id: runId, project_id: 'proj', task_id: task, agent: 'claude', status, exit_code: status === 'running' ? -1 : 0 }));
    return dir;
  }

  it('finds the newest running run, or the given one only', () => {
    const older = run('running');
    run('completed');
    const newer = run('running');
    const taskDir = layout.taskDir('proj', task);
    expect(findRunningRun(taskDir)).toBe(newer);
    expect(findRunningRun(taskDir, basename(older))).toBe(older);
    expect(findRunningRun(taskDir, 'no-such-run')).toBeUndefined();
    expect(findRunningRun(layout.taskDir('proj', 'task-20260101-000000-none'))).toBeUndefined();
  });

  it('deletes a task without running runs and refuses a missing one', async () => {
    run('completed');
    const taskDir = layout.taskDir('proj', task);
    const stopTask = jest.fn(async () => undefined);
    await deleteTaskFolder(taskDir, { stopTask });
    expect(existsSync(taskDir)).toBe(false);
    expect(stopTask).not.toHaveBeenCalled();
    await expect(deleteTaskFolder(taskDir, { stopTask })).rejects.toThrow(`task not found: proj/${task}`);
  });

  it('refuses a task with a running run (nothing removed) unless forced, which stops it first', async () => {
    const running = run('running');
    const taskDir = layout.taskDir('proj', task);
    const order: string[] = [];
    const stopTask = jest.fn(async (dir: string) => {
      order.push(existsSync(dir) ? 'stopped while present' : 'stopped after removal');
    });
    await expect(deleteTaskFolder(taskDir, { stopTask })).rejects.toThrow(`task ${task} has a running run (${basename(running)}); use --force to delete anyway`);
    expect(existsSync(running)).toBe(true);
    expect(stopTask).not.toHaveBeenCalled();
    await deleteTaskFolder(taskDir, { force: true, stopTask });
    expect(stopTask).toHaveBeenCalledWith(taskDir);
    expect(order).toEqual(['stopped while present']);
    expect(existsSync(taskDir)).toBe(false);
  });
});
