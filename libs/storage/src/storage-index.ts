import { readdirSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { RUN_INFO_FILE, RunsLayout } from './layout';
import type { LivenessProbe } from './liveness';
import { createLivenessProbe } from './seams.providers';
import { isFinalRunInfo, readRunInfoHealed, readRunInfoReconciled } from './reconcile';
import type { RunInfo } from './run-info';
import { ioError } from './storage.errors';
import { validateRunId } from './ids';

interface DirEntryCache {
  mtimeMs: number;
  names: string[];
  readAtMs: number;
}

interface RunPaths {
  info: string;
  dir: string;
}

interface TaskPlaces {
  runsDir: string;
  runs: Map<string, RunPaths>;
}

interface RunInfoCache {
  mtimeMs: number;
  size: number;
  ino: number;
  info: RunInfo;
  readAtMs: number;
  /** The file holds exactly `info` (not a healed view of it). */
  stored: boolean;
  /** The runs-folder listing under which this record was found final (see FINAL_AFTER_MS). */
  finalIn?: readonly string[];
}

/**
 * Filesystem timestamps are coarse (kernel ticks), so a change made in the same tick as our read
 * keeps the old mtime. A cached entry is only trusted once its mtime is this much older than the
 * moment we read it (git's "racy" rule); until then it is read again.
 */
const RACY_WINDOW_MS = 1000;

function settled(mtimeMs: number, readAtMs: number): boolean {
  return mtimeMs + RACY_WINDOW_MS < readAtMs;
}

/**
 * A finished record (isFinalRunInfo) left unchanged this long is final: the index stops stat-ing
 * it while its task's runs folder is unchanged. A finished record is rewritten only within
 * seconds of its first finished write (`stop` records a run 300 ms after its processes are gone;
 * a late runner then records the real exit), and by nothing later.
 */
const FINAL_AFTER_MS = 60_000;

const NO_THROW = { throwIfNoEntry: false } as const;

/** Stat identity used to decide whether a cached value is still the file's content. */
function statKey(path: string): { mtimeMs: number; size: number; ino: number; isDir: boolean } | undefined {
  try {
    // throwIfNoEntry: a missing file is common here, and an exception per miss is costly. Number
    // stats (mtime to the microsecond) cost ~30 % less than bigint ones; the racy window above
    // covers what sub-microsecond precision would add.
    const st = statSync(path, NO_THROW);
    if (!st) return undefined;
    return { mtimeMs: st.mtimeMs, size: st.size, ino: st.ino, isDir: st.isDirectory() };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw ioError(`stat ${path}`, err);
  }
}

/**
 * Listing of the runs root with caches, so repeated listings (list/status, the API server with
 * thousands of runs) cost one stat per directory and per run-info not yet final:
 * - directory listings are cached per directory and reused while its mtime is unchanged;
 * - run-info files are parsed again only when their mtime, size or inode changed. Cached
 *   `running` records are still re-checked for liveness on every read (processes die silently);
 * - a final record (FINAL_AFTER_MS) is not even stat-ed while its task's runs listing is the same.
 */
export class StorageIndex {
  private readonly dirs = new Map<string, DirEntryCache>();
  private readonly infos = new Map<string, RunInfoCache>();
  private readonly entries = new Map<string, { mtimeMs: number; names: ReadonlySet<string>; readAtMs: number }>();
  private readonly runLocations = new Map<string, { project: string; task: string }>();
  /** Listings (the cached name arrays of subdirs) whose runs are already in runLocations. */
  private readonly located = new WeakSet<string[]>();
  /**
   * Per project/task: its runs folder, and the run-info.yaml path and folder of each run; the
   * layout's confinement checks and the path joins run once per task and run, not per listing.
   */
  private readonly taskPlaces = new Map<string, TaskPlaces>();

  constructor(
    readonly layout: RunsLayout,
    private readonly probe: LivenessProbe = createLivenessProbe(),
  ) {}

  /** Sub-directory names of `dir`, sorted; [] when it does not exist. */
  private subdirs(dir: string): string[] {
    const st = statKey(dir);
    if (!st || !st.isDir) {
      this.dirs.delete(dir);
      return [];
    }
    const cached = this.dirs.get(dir);
    if (cached && cached.mtimeMs === st.mtimeMs && settled(cached.mtimeMs, cached.readAtMs)) return cached.names;
    const readAtMs = Date.now();
    let names: string[];
    try {
      // a symlinked project/task/runs folder that leads out of the root lists nothing (issue #29)
      names = !this.insideRoot(dir)
        ? []
        : readdirSync(dir, { withFileTypes: true })
            .filter((e) => e.isDirectory())
            .map((e) => e.name)
            .sort();
    } catch (err) {
      throw ioError(`read dir ${dir}`, err);
    }
    this.dirs.set(dir, { mtimeMs: st.mtimeMs, names, readAtMs });
    return names;
  }

  private realRoot: string | undefined;

  /** Whether the real path of `dir` (symlinks resolved) lies inside the real path of the root; checked when a listing is (re)read. */
  private insideRoot(dir: string): boolean {
    try {
      this.realRoot ??= realpathSync(this.layout.root);
      const rel = relative(this.realRoot, realpathSync(dir));
      return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
    } catch {
      return true; // vanished meanwhile: readdir reports it
    }
  }

  /**
   * Names of every entry of `dir` (files included), cached while the folder's mtime is unchanged:
   * creating, removing or renaming an entry changes it, so a name missing here is a file that does
   * not exist and callers skip probing it. Undefined when `dir` is not a folder.
   */
  entryNames(dir: string): ReadonlySet<string> | undefined {
    const st = statKey(dir);
    if (!st || !st.isDir) {
      this.entries.delete(dir);
      return undefined;
    }
    const cached = this.entries.get(dir);
    if (cached && cached.mtimeMs === st.mtimeMs && settled(cached.mtimeMs, cached.readAtMs)) return cached.names;
    const readAtMs = Date.now();
    let names: Set<string>;
    try {
      names = new Set(readdirSync(dir));
    } catch (err) {
      throw ioError(`read dir ${dir}`, err);
    }
    this.entries.set(dir, { mtimeMs: st.mtimeMs, names, readAtMs });
    return names;
  }

  /** Project folders of the root; `.`/`_` folders are the tool's own (run slots, worktrees, host-local state), not projects. */
  listProjects(): string[] {
    return this.subdirs(this.layout.root).filter((p) => !p.startsWith('.') && !p.startsWith('_'));
  }

  listTasks(projectId: string): string[] {
    return this.subdirs(this.layout.projectDir(projectId));
  }

  listRuns(projectId: string, taskId: string): string[] {
    return this.runsOf(projectId, taskId, this.places(projectId, taskId));
  }

  private runsOf(projectId: string, taskId: string, places: TaskPlaces): string[] {
    const runs = this.subdirs(places.runsDir);
    if (!this.located.has(runs)) {
      const location = { project: projectId, task: taskId };
      for (const run of runs) this.runLocations.set(run, location);
      this.located.add(runs);
    }
    return runs;
  }

  /**
   * The runs of a task in run-id order, each with its folder and reconciled run-info (undefined
   * when the folder has no run-info.yaml): what listings need, with one path lookup per task.
   */
  taskRuns(projectId: string, taskId: string): { runId: string; dir: string; info: RunInfo | undefined }[] {
    const places = this.places(projectId, taskId);
    const runs = this.runsOf(projectId, taskId, places);
    return runs.map((runId) => {
      const p = this.pathIn(places, projectId, taskId, runId);
      return { runId, dir: p.dir, info: this.readCached(p.info, runs) };
    });
  }

  /** The reconciled run-info of one run; undefined when the run folder has no run-info.yaml. */
  runInfo(projectId: string, taskId: string, runId: string): RunInfo | undefined {
    return this.readCached(this.infoPath(projectId, taskId, runId));
  }

  /** The run's folder (layout.runDir, memoised). */
  runDir(projectId: string, taskId: string, runId: string): string {
    return this.runPath(projectId, taskId, runId).dir;
  }

  private infoPath(projectId: string, taskId: string, runId: string): string {
    return this.runPath(projectId, taskId, runId).info;
  }

  private runPath(projectId: string, taskId: string, runId: string): RunPaths {
    return this.pathIn(this.places(projectId, taskId), projectId, taskId, runId);
  }

  private places(projectId: string, taskId: string): TaskPlaces {
    const taskKey = `${projectId}/${taskId}`;
    let places = this.taskPlaces.get(taskKey);
    if (!places) {
      places = { runsDir: this.layout.runsDir(projectId, taskId), runs: new Map() };
      this.taskPlaces.set(taskKey, places);
    }
    return places;
  }

  private pathIn(places: TaskPlaces, projectId: string, taskId: string, runId: string): RunPaths {
    let paths = places.runs.get(runId);
    if (!paths) {
      const dir = this.layout.runDir(projectId, taskId, runId);
      paths = { info: join(dir, RUN_INFO_FILE), dir };
      places.runs.set(runId, paths);
    }
    return paths;
  }

  /**
   * The run-info at `path` from the cache while its stat is unchanged; `listing` (the task's runs
   * folder listing) lets a final record skip even the stat while that listing is unchanged.
   */
  private readCached(path: string, listing?: readonly string[]): RunInfo | undefined {
    const cached = this.infos.get(path);
    if (listing && cached?.finalIn === listing) return cached.info;
    const st = statKey(path);
    if (!st) {
      this.infos.delete(path);
      return undefined;
    }
    const fresh =
      cached && cached.mtimeMs === st.mtimeMs && cached.size === st.size && cached.ino === st.ino && settled(cached.mtimeMs, cached.readAtMs);
    if (fresh && cached.info.status !== 'running') {
      if (listing && cached.stored && isFinalRunInfo(cached.info) && cached.mtimeMs + FINAL_AFTER_MS < Date.now()) cached.finalIn = listing;
      return cached.info;
    }
    if (fresh && this.probe.isRunAlive(cached.info)) return cached.info;
    const readAtMs = Date.now();
    const { info, stored } = readRunInfoHealed(path, this.probe);
    // the stat taken before the read: a change after it makes the next check read again
    this.infos.set(path, { mtimeMs: st.mtimeMs, size: st.size, ino: st.ino, info, readAtMs, stored });
    return info;
  }

  /**
   * Run-infos of a task (or of every task of the project), sorted by run id within each task.
   * Run folders without run-info.yaml are reported as synthesised `unknown` records.
   */
  runInfos(projectId: string, taskId?: string): RunInfo[] {
    const tasks = taskId === undefined ? this.listTasks(projectId) : [taskId];
    const out: RunInfo[] = [];
    for (const task of tasks) {
      for (const run of this.taskRuns(projectId, task)) out.push(run.info ?? readRunInfoReconciled(join(run.dir, RUN_INFO_FILE), this.probe));
    }
    return out;
  }

  allRunInfos(): RunInfo[] {
    return this.listProjects().flatMap((p) => this.runInfos(p));
  }

  findRun(runId: string): { project: string; task: string; dir: string } | undefined {
    validateRunId(runId);
    const known = this.runLocations.get(runId);
    if (known && this.listRuns(known.project, known.task).includes(runId)) {
      return { ...known, dir: this.layout.runDir(known.project, known.task, runId) };
    }
    for (const project of this.listProjects()) {
      for (const task of this.listTasks(project)) {
        if (this.listRuns(project, task).includes(runId)) {
          return { project, task, dir: this.layout.runDir(project, task, runId) };
        }
      }
    }
    return undefined;
  }
}
