import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gcProjects, gcSummary, runGc, type GcSettings } from '@app/runner';
import { newRunInfo, runInfoFile, RunsLayout, writeRunInfo } from '@app/storage';

describe('gc use case (libs/runner)', () => {
  let root: string;
  let layout: RunsLayout;
  const task = 'task-20260101-000000-gcx';
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'gc-'));
    layout = new RunsLayout(root);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function run(status: 'completed' | 'failed' | 'running', startedDaysAgo: number): string {
    const { runId, dir } = layout.allocateRunDir('proj', task);
    const start = new Date(Date.now() - startedDaysAgo * 86_400_000);
    writeRunInfo(runInfoFile(dir), newRunInfo({ run_id: runId, project_id: 'proj', task_id: task, agent: 'claude', status, start_time: start, end_time: start, exit_code: status === 'failed' ? 1 : 0, pid: status === 'running' ? process.pid : 0, pgid: status === 'running' ? process.pid : 0 }));
    writeFileSync(join(dir, 'output.md'), 'x'.repeat(1000));
    return dir;
  }

  function settings(over: Partial<GcSettings> = {}): GcSettings {
    return { cutoff: new Date(Date.now() - 7 * 86_400_000), dryRun: false, keepFailed: false, rotateBus: false, busMaxBytes: 1 << 20, deleteDoneTasks: false, log: () => undefined, warn: () => undefined, ...over };
  }

  it('deletes old finished runs only, and a dry run changes nothing', () => {
    const oldDone = run('completed', 30);
    const oldFailed = run('failed', 30);
    const recent = run('completed', 1);
    const live = run('running', 30);
    const dry = runGc(layout, gcProjects(layout), settings({ dryRun: true }));
    expect(dry.deleted_runs.map((r) => r.run_dir).sort()).toEqual([oldDone, oldFailed].sort());
    expect([oldDone, oldFailed, recent, live].every((d) => existsSync(d))).toBe(true);
    expect(gcSummary(dry)).toMatch(/^Would delete 2 runs, freed /);

    const kept = runGc(layout, ['proj'], settings({ keepFailed: true }));
    expect(kept.deleted_runs.map((r) => r.run_dir)).toEqual([oldDone]);
    expect(kept.freed_bytes).toBeGreaterThan(1000);
    expect(existsSync(oldDone)).toBe(false);
    expect([oldFailed, recent, live].every((d) => existsSync(d))).toBe(true);
  });

  it('gcProjects names a missing project or root clearly', () => {
    expect(() => gcProjects(layout, 'nope')).toThrow(/^unknown project "nope" in runs root /);
    expect(() => gcProjects(new RunsLayout(join(root, 'missing')))).toThrow(/^root directory not found: /);
    run('completed', 1);
    expect(gcProjects(layout)).toEqual(['proj']);
  });
});
