import { mkdirSync, openSync, closeSync, rmSync, statSync, utimesSync, writeFileSync, writeSync, ftruncateSync } from 'node:fs';
import { join } from 'node:path';
import { LivenessProbe, RunInfo, RunsLayout, readRunInfo, serializeRunInfo, StorageIndex, tryFlock, unflock, writeRunInfo, ZERO_TIME } from '@app/storage';
import { makeTempDir } from './helpers/temp';

const T1 = 'task-20260101-000000-aaa';
const T2 = 'task-20260101-000000-bbb';

function info(runId: string, task: string, overrides: Partial<RunInfo> = {}): RunInfo {
  return {
    version: 1, run_id: runId, project_id: 'p', task_id: task, agent: 'claude', pid: 0, pgid: 0,
    start_time: new Date('2026-01-01T00:00:00Z'), end_time: new Date('2026-01-01T00:01:00Z'), exit_code: 0,
    status: 'completed', agent_version: '', ...overrides,
  };
}

/** A probe that counts calls and answers from a set of "alive" pids. */
class FakeWorld extends LivenessProbe {
  alive = new Set<number>();
  override isPidAlive(pid: number): boolean {
    return this.alive.has(pid);
  }
  override isGroupAlive(pgid: number): boolean {
    return this.alive.has(pgid);
  }
}

/** The fs module object itself (what the lib's named imports read from), for spying on its calls. */
const nodeFs: typeof import('node:fs') = require('node:fs');

const FIXED_MTIME = new Date('2026-01-01T00:00:00Z');

/** Overwrites a file in place (same inode and size), then puts back the whole-second mtime it had. */
function rewriteKeepingStat(path: string, text: string): void {
  expect(Buffer.byteLength(text)).toBe(statSync(path).size);
  const fd = openSync(path, 'r+');
  ftruncateSync(fd, 0);
  writeSync(fd, text, 0);
  closeSync(fd);
  utimesSync(path, FIXED_MTIME, FIXED_MTIME);
}

describe('StorageIndex', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  let layout: RunsLayout;
  beforeEach(() => {
    tmp = makeTempDir();
    layout = new RunsLayout(tmp.dir);
  });
  afterEach(() => tmp.cleanup());

  function addRun(task: string, runId: string, overrides: Partial<RunInfo> = {}): string {
    const dir = layout.runDir('p', task, runId);
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'run-info.yaml');
    writeRunInfo(path, info(runId, task, overrides));
    return path;
  }

  it('lists projects, tasks and runs sorted, ignoring plain files and the folders of the tool itself', () => {
    addRun(T2, 'r-2');
    addRun(T1, 'r-10');
    addRun(T1, 'r-9');
    mkdirSync(join(tmp.dir, 'another'));
    mkdirSync(join(tmp.dir, '.conductor', 'queue'), { recursive: true }); // run slots, held tasks, worktrees
    mkdirSync(join(tmp.dir, '_server'));
    writeFileSync(join(tmp.dir, 'file.txt'), '');
    writeFileSync(join(tmp.dir, 'p', 'PROJECT-MESSAGE-BUS.md'), '');
    const index = new StorageIndex(layout);
    expect(index.listProjects()).toEqual(['another', 'p']);
    expect(index.listTasks('p')).toEqual([T1, T2]);
    expect(index.listRuns('p', T1)).toEqual(['r-10', 'r-9']);
    expect(index.listRuns('p', 'task-20260101-000000-none')).toEqual([]);
    expect(index.runInfos('p').map((i) => i.run_id)).toEqual(['r-10', 'r-9', 'r-2']);
    expect(index.allRunInfos()).toHaveLength(3);
    expect(index.findRun('r-2')).toEqual({ project: 'p', task: T2, dir: layout.runDir('p', T2, 'r-2') });
    expect(index.findRun('nope')).toBeUndefined();
    expect(() => index.findRun('../r-2')).toThrow(expect.objectContaining({ code: 'INVALID_ID' }));
  });

  it('sees new runs and tasks as soon as their directory changes', () => {
    const index = new StorageIndex(layout);
    addRun(T1, 'r1');
    expect(index.listRuns('p', T1)).toEqual(['r1']);
    addRun(T1, 'r2');
    addRun(T2, 'r1');
    expect(index.listRuns('p', T1)).toEqual(['r1', 'r2']);
    expect(index.listTasks('p')).toEqual([T1, T2]);
  });

  it('does not trust a listing taken in the same timestamp tick as a later change', () => {
    addRun(T1, 'r1');
    const runsDir = layout.runsDir('p', T1);
    const tick = new Date();
    utimesSync(runsDir, tick, tick);
    const index = new StorageIndex(layout);
    expect(index.listRuns('p', T1)).toEqual(['r1']);
    addRun(T1, 'r2');
    utimesSync(runsDir, tick, tick); // the second mkdir landed in the same coarse tick
    expect(index.listRuns('p', T1)).toEqual(['r1', 'r2']);
  });

  it('entryNames: every entry of a folder, files included, fresh after an entry is added or removed', () => {
    addRun(T1, 'r1');
    const dir = layout.taskDir('p', T1);
    const old = new Date('2025-01-01T00:00:00Z');
    utimesSync(dir, old, old); // settled: the index trusts its cached listing
    const index = new StorageIndex(layout);
    expect([...index.entryNames(dir)!]).toEqual(['runs']);
    writeFileSync(join(dir, 'DONE'), '');
    expect([...index.entryNames(dir)!].sort()).toEqual(['DONE', 'runs']);
    utimesSync(dir, old, old);
    expect(index.entryNames(dir)!.has('DONE')).toBe(true);
    rmSync(join(dir, 'DONE'));
    expect(index.entryNames(dir)!.has('DONE')).toBe(false);
    // a change in the same coarse tick as the listing is not trusted (racy rule)
    const tick = new Date();
    utimesSync(dir, tick, tick);
    expect(index.entryNames(dir)!.has('PAUSED')).toBe(false);
    writeFileSync(join(dir, 'PAUSED'), '');
    utimesSync(dir, tick, tick);
    expect(index.entryNames(dir)!.has('PAUSED')).toBe(true);
    expect(index.entryNames(join(dir, 'PAUSED'))).toBeUndefined();
    expect(index.entryNames(join(dir, 'missing'))).toBeUndefined();
  });

  it('reuses a parsed run-info while its mtime, size and inode are unchanged', () => {
    const path = addRun(T1, 'r1', { status: 'completed' });
    utimesSync(path, FIXED_MTIME, FIXED_MTIME);
    const index = new StorageIndex(layout);
    expect(index.runInfo('p', T1, 'r1')?.status).toBe('completed');
    // Same bytes count, same inode, same mtime: the cache answers without re-reading.
    const swapped = serializeRunInfo(info('r1', T1, { status: 'completed', agent: 'gemini' }));
    const padded = swapped.replace('agent: gemini', 'agent: gemini'.padEnd('agent: claude'.length));
    rewriteKeepingStat(path, padded);
    expect(index.runInfo('p', T1, 'r1')?.agent).toBe('claude');
    // A real update changes the mtime: the new content is read.
    writeRunInfo(path, info('r1', T1, { status: 'failed', exit_code: 3 }));
    const fresh = index.runInfo('p', T1, 'r1');
    expect([fresh?.status, fresh?.exit_code]).toEqual(['failed', 3]);
    // A fresh index always reads from disk.
    expect(new StorageIndex(layout).runInfo('p', T1, 'r1')?.status).toBe('failed');
  });

  it('re-checks cached running runs for liveness and heals them when their process dies', () => {
    const world = new FakeWorld();
    world.alive.add(4242);
    const path = addRun(T1, 'r1', { status: 'running', pid: 4242, pgid: 4242, end_time: ZERO_TIME, exit_code: -1 });
    const index = new StorageIndex(layout, world);
    expect(index.runInfos('p', T1)[0].status).toBe('running');
    expect(index.runInfos('p', T1)[0].status).toBe('running');
    world.alive.clear();
    const healed = index.runInfos('p', T1)[0];
    expect(healed.status).toBe('failed');
    expect(healed.error_summary).toBe('reconciled stale running status: process is not alive');
    expect(new StorageIndex(layout).runInfo('p', T1, 'r1')?.status).toBe('failed');
    expect(statSync(path).size).toBeGreaterThan(0);
  });

  describe('finished run-infos unchanged for a minute are final', () => {
    const OLD = new Date(Date.now() - 120_000);
    /** Paths the index stats during `fn`. */
    function statted(fn: () => void): string[] {
      const spy = jest.spyOn(nodeFs, 'statSync');
      try {
        fn();
        return spy.mock.calls.map((c) => String(c[0]));
      } finally {
        spy.mockRestore();
      }
    }
    function addOldRun(task: string, runId: string, overrides: Partial<RunInfo> = {}): string {
      const path = addRun(task, runId, overrides);
      utimesSync(path, OLD, OLD);
      return path;
    }
    function settleListings(): void {
      for (const dir of [layout.root, join(layout.root, 'p'), layout.taskDir('p', T1), layout.runsDir('p', T1)]) utimesSync(dir, OLD, OLD);
    }

    it('stats only the folders once a task has been listed twice', () => {
      const done = addOldRun(T1, 'r1');
      const failed = addOldRun(T1, 'r2', { status: 'failed', exit_code: 143 });
      settleListings();
      const index = new StorageIndex(layout);
      index.runInfos('p', T1);
      index.runInfos('p', T1);
      const paths = statted(() => expect(index.runInfos('p', T1).map((i) => i.status)).toEqual(['completed', 'failed']));
      expect(paths).toEqual([layout.runsDir('p', T1)]);
      expect(paths).not.toContain(done);
      expect(paths).not.toContain(failed);
    });

    it('keeps checking records that may still change: running, failed −1 (healed once DONE), or recent', () => {
      const world = new FakeWorld();
      world.alive.add(4242);
      const running = addOldRun(T1, 'r1', { status: 'running', pid: 4242, pgid: 4242, end_time: ZERO_TIME, exit_code: -1 });
      const stale = addOldRun(T1, 'r2', { status: 'failed', exit_code: -1 });
      const recent = addRun(T1, 'r3');
      const fewSecondsAgo = new Date(Date.now() - 5000);
      utimesSync(recent, fewSecondsAgo, fewSecondsAgo);
      settleListings();
      const index = new StorageIndex(layout, world);
      index.runInfos('p', T1);
      index.runInfos('p', T1);
      const paths = statted(() => expect(index.runInfos('p', T1).map((i) => i.status)).toEqual(['running', 'failed', 'completed']));
      expect(paths).toEqual(expect.arrayContaining([running, stale, recent]));
    });

    it('keeps checking a record healed only in memory (another process held its lock)', () => {
      const path = addOldRun(T1, 'r1', { status: 'running', pid: 999_999, pgid: 999_999, end_time: ZERO_TIME, exit_code: -1 });
      writeFileSync(join(layout.taskDir('p', T1), 'DONE'), '');
      settleListings();
      const lock = openSync(`${path}.lock`, 'a+');
      expect(tryFlock(lock, 'ex')).toBe(true);
      try {
        const index = new StorageIndex(layout, new FakeWorld());
        index.runInfos('p', T1);
        index.runInfos('p', T1);
        const paths = statted(() => expect(index.runInfos('p', T1)[0].status).toBe('completed'));
        expect(paths).toContain(path);
        expect(readRunInfo(path).status).toBe('running');
      } finally {
        unflock(lock);
        closeSync(lock);
      }
    });

    it('sees a recent finished record rewritten (a runner recording the real exit after `stop` did)', () => {
      const path = addRun(T1, 'r1', { status: 'failed', exit_code: 143, error_summary: 'stopped by run-agent stop (SIGTERM)' });
      const early = new Date(Date.now() - 3000);
      utimesSync(path, early, early);
      settleListings();
      const index = new StorageIndex(layout);
      index.runInfos('p', T1);
      index.runInfos('p', T1);
      writeRunInfo(path, info('r1', T1, { status: 'completed', exit_code: 0 }));
      expect(index.runInfos('p', T1)[0].status).toBe('completed');
    });

    it('drops a final record whose run folder is removed, and re-checks the others once the listing changes', () => {
      const gone = addOldRun(T1, 'r1');
      const kept = addOldRun(T1, 'r2');
      settleListings();
      const index = new StorageIndex(layout);
      index.runInfos('p', T1);
      index.runInfos('p', T1);
      rmSync(layout.runDir('p', T1, 'r1'), { recursive: true });
      const paths = statted(() => expect(index.runInfos('p', T1).map((i) => i.run_id)).toEqual(['r2']));
      expect(paths).toContain(kept);
      expect(paths).not.toContain(gone);
    });
  });

  it('reports run folders without run-info.yaml as unknown in runInfos and undefined in runInfo', () => {
    mkdirSync(layout.runDir('p', T1, 'r1'), { recursive: true });
    const index = new StorageIndex(layout);
    expect(index.runInfo('p', T1, 'r1')).toBeUndefined();
    expect(index.runInfos('p', T1)).toEqual([expect.objectContaining({ run_id: 'r1', status: 'unknown', version: 0 })]);
    writeRunInfo(join(layout.runDir('p', T1, 'r1'), 'run-info.yaml'), info('r1', T1));
    expect(index.runInfo('p', T1, 'r1')?.status).toBe('completed');
  });

  it('returns [] for a missing root', () => {
    const index = new StorageIndex(new RunsLayout(join(tmp.dir, 'absent')));
    expect(index.listProjects()).toEqual([]);
    expect(index.allRunInfos()).toEqual([]);
  });
});
