import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findActiveChildren, holdRun } from '@app/runner';
import { createLivenessProbe, readRunInfo, RunsLayout, writeRunInfo, ZERO_TIME } from '@app/storage';

// The heal race of a parent's DONE handling (children.e2e-spec "waits for the child without
// restarting the root" once read the child `failed`): the child's agent group is gone, but its
// runner has not recorded `completed` yet. While the runner holds RUNNER.lock, the child is live.
describe('child wait: a child whose runner still holds the run is not healed to failed', () => {
  const root = mkdtempSync(join(tmpdir(), 'child-hold-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const layout = new RunsLayout(root);
  const project = 'proj';
  const task = 'task-20260101-000000-hold';

  function childRun(): string {
    const dead = spawnSync('true').pid!; // an exited process: its pid and group are gone
    const { runId, dir } = layout.allocateRunDir(project, task);
    writeRunInfo(join(dir, 'run-info.yaml'), {
      version: 1, run_id: runId, parent_run_id: 'run-parent', project_id: project, task_id: task, agent: 'claude',
      pid: dead, pgid: dead, start_time: new Date(), end_time: ZERO_TIME, exit_code: -1, status: 'running', agent_version: '',
    });
    return dir;
  }

  it('stays running while held, and is healed once the runner is gone', async () => {
    const dir = childRun();
    const release = holdRun(dir);
    const probe = createLivenessProbe();
    const taskDir = layout.taskDir(project, task);
    expect((await findActiveChildren(taskDir, probe)).map((c) => c.dir)).toEqual([dir]);
    expect(readRunInfo(join(dir, 'run-info.yaml')).status).toBe('running');
    release();
    expect(await findActiveChildren(taskDir, probe)).toEqual([]);
    expect(readRunInfo(join(dir, 'run-info.yaml')).status).toBe('failed');
  });
});
