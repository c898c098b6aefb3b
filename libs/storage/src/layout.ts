import { existsSync, mkdirSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { newRunId, randomSlug, validateProjectId, validateRunId, validateTaskId } from './ids';
import { ioError, StorageError } from './storage.errors';

import { PROJECT_BUS_FILE, RUN_INFO_FILE, RUNS_DIR_NAME, TASK_BUS_FILE } from './layout-names';

export { PROJECT_BUS_FILE, RUN_INFO_FILE, RUNS_DIR_NAME, TASK_BUS_FILE };

/**
 * Paths of the runs root (cli-storage.md §3.1). Every id is validated before it becomes a path
 * (D18). Task ids are checked only for path safety here, because upstream creates and reads task
 * folders whose names do not match the task-id regex (list/status show every sub-folder).
 */
export class RunsLayout {
  readonly root: string;

  constructor(root: string) {
    if (!root) throw new StorageError('IO', 'storage root is empty');
    this.root = resolve(root);
  }

  projectDir(projectId: string): string {
    return this.inside(join(this.root, validateSegment(projectId, 'project')));
  }

  taskDir(projectId: string, taskId: string): string {
    return this.inside(join(this.projectDir(projectId), validateSegment(taskId, 'task')));
  }

  runsDir(projectId: string, taskId: string): string {
    return join(this.taskDir(projectId, taskId), RUNS_DIR_NAME);
  }

  runDir(projectId: string, taskId: string, runId: string): string {
    return this.inside(join(this.runsDir(projectId, taskId), validateRunId(runId)));
  }

  runInfoPath(projectId: string, taskId: string, runId: string): string {
    return join(this.runDir(projectId, taskId, runId), RUN_INFO_FILE);
  }

  projectBus(projectId: string): string {
    return join(this.projectDir(projectId), PROJECT_BUS_FILE);
  }

  taskBus(projectId: string, taskId: string): string {
    return join(this.taskDir(projectId, taskId), TASK_BUS_FILE);
  }

  /**
   * Creates a fresh run folder (0755) under `<task>/runs/`, creating parents as needed. A name
   * collision (another process with the same pid namespace, or a reused pid) falls back to
   * `<id>-<random digits>`.
   */
  /**
   * The run folder of a run id chosen by the caller (`run-agent job --run-id`, which `run-agent mcp`
   * uses to know the id up front): created when absent; one that already holds a run-info is a
   * CONFLICT.
   */
  adoptRunDir(projectId: string, taskId: string, runId: string): { runId: string; dir: string } {
    const dir = this.runDir(projectId, taskId, runId);
    if (existsSync(join(dir, RUN_INFO_FILE))) throw new StorageError('CONFLICT', `run ${runId} already exists`);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o755 });
    } catch (err) {
      throw ioError(`create run dir ${dir}`, err);
    }
    return { runId, dir };
  }

  allocateRunDir(projectId: string, taskId: string, now: Date = new Date()): { runId: string; dir: string } {
    validateProjectId(projectId);
    validateTaskId(taskId);
    const runsDir = this.runsDir(projectId, taskId);
    let runId = newRunId(now);
    for (let attempt = 0; attempt < 20; attempt++) {
      const dir = join(runsDir, runId);
      try {
        mkdirSync(dir, { mode: 0o755 });
        return { runId, dir };
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') {
          // First run of the task: create <task>/runs and retry the same id.
          try {
            mkdirSync(runsDir, { recursive: true, mode: 0o755 });
          } catch (mkErr) {
            throw ioError(`create runs dir ${runsDir}`, mkErr);
          }
          continue;
        }
        if (code !== 'EEXIST') throw ioError(`create run dir ${dir}`, err);
      }
      runId = `${newRunId(now).replace(/-\d+$/, '')}-${randomSlug(9, '0123456789')}`;
    }
    throw new StorageError('CONFLICT', `create run dir: too many collisions in ${runsDir}`);
  }

  /** True when `path` (made absolute) lies inside the root (relative-path semantics, no symlinks). */
  contains(path: string): boolean {
    const rel = relative(this.root, resolve(path));
    return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
  }

  private inside(path: string): string {
    if (!this.contains(path)) throw new StorageError('INVALID_ID', `path escapes runs root: ${path}`);
    return path;
  }
}

/** One safe folder name: no separators, no `..`, not empty, no NUL. */
export function validateSegment(value: string, what: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new StorageError('INVALID_ID', `${what} ID is empty`);
  if (/[/\\\0]/.test(value) || value === '.' || value.includes('..')) {
    throw new StorageError('INVALID_ID', `invalid ${what} ID ${JSON.stringify(value)}: must be a single folder name (no path separators or "..")`);
  }
  return value;
}
