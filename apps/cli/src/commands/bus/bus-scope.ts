/**
 * Where a bus command reads or writes, and which project/task/run a posted message names
 * (cli-storage.md §1.9, D7, D8, D18). The modules that load the YAML parser (config files,
 * run-info.yaml) are required lazily: `bus post` runs on the fast path and must start quickly.
 */
import { basename, dirname, join, resolve } from 'node:path';
import { resolveRootSetting } from '@app/storage/config/settings';
import { discoverBus } from '@app/messagebus/discover';
import { BUS_FILE_NAMES, PROJECT_BUS_FILE, TASK_BUS_FILE } from '@app/messagebus/types';
import type * as Heavy from './bus-scope-heavy';
import { runFolderAbove } from '@app/storage/run-files';
import { RUNS_DIR_NAME } from '@app/storage/layout-names';

export interface BusEnv {
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export interface Scope {
  project?: string;
  task?: string;
  run?: string;
  root?: string;
}

let heavy: typeof Heavy | undefined;
function loadHeavy(): typeof Heavy {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (heavy ??= require('./bus-scope-heavy') as typeof Heavy);
}

function clean(value: string | undefined): string | undefined {
  const t = value?.trim();
  return t && t !== '.' && t !== '/' ? t : undefined;
}

/**
 * D8 through the one settings resolver: --root → the root of the task an agent runs in
 * ($JRUN_TASK_FOLDER, as every command) → $CONDUCTOR_ROOT / $RUN_AGENT_ROOT → config
 * storage.runs_dir → ~/.run-agent/runs. The YAML loader is required only when a config file decides.
 */
export function resolveBusRoot(flag: string | undefined, e: BusEnv): string {
  return resolveRootSetting({ flag: clean(flag), env: e.env, cwd: e.cwd, taskFolder: true, load: (path, env) => loadHeavy().loadConfigLenient(path, env) });
}

export function busFileFor(root: string, project: string, task?: string): string {
  return task ? join(root, project, task, TASK_BUS_FILE) : join(root, project, PROJECT_BUS_FILE);
}

/** `<…>/<project>/<task>/TASK-MESSAGE-BUS.md` or `<…>/<project>/PROJECT-MESSAGE-BUS.md`. */
export function scopeFromBusPath(path: string): Scope {
  const p = resolve(path);
  const name = basename(p);
  if (name === TASK_BUS_FILE) return { task: clean(basename(dirname(p))), project: clean(basename(dirname(dirname(p)))) };
  if (name === PROJECT_BUS_FILE || name === BUS_FILE_NAMES[2]) return { project: clean(basename(dirname(p))) };
  return {};
}

/** $JRUN_RUN_FOLDER = <…>/<project>/<task>/runs/<run> (only when the parent is literally `runs`). */
export function scopeFromRunFolder(folder: string | undefined): Scope {
  if (!clean(folder)) return {};
  const dir = resolve(folder!.trim());
  if (basename(dirname(dir)) !== RUNS_DIR_NAME) return {};
  const taskDir = dirname(dirname(dir));
  const s = { project: clean(basename(dirname(taskDir))), task: clean(basename(taskDir)), run: clean(basename(dir)) };
  return s.project && s.task && s.run ? s : {};
}

/** $JRUN_TASK_FOLDER = <…>/<project>/<task>. */
export function scopeFromTaskFolder(folder: string | undefined): Scope {
  if (!clean(folder)) return {};
  const dir = resolve(folder!.trim());
  return { project: clean(basename(dirname(dir))), task: clean(basename(dir)) };
}

/** The first run-info.yaml above `cwd` naming a project and task (parsed only when one exists). */
export function scopeFromCwdRunInfo(cwd: string): Scope {
  return runFolderAbove(cwd) ? loadHeavy().scopeFromRunInfo(cwd) : {};
}

export function isProjectHome(cwd: string): boolean {
  return loadHeavy().isProjectHome(cwd);
}

export function cannotFindBus(cwd: string): Error {
  return new Error(
    `cannot find message bus: run from inside a task or project directory: no message bus file found from "${cwd}" (searched for ${BUS_FILE_NAMES.join(', ')})`,
  );
}

/**
 * Fallbacks shared by post and read after their first steps: the run-info above the working
 * directory, then a project home (a folder holding task folders), then upward discovery.
 */
export function busFromWorkingDir(rootFlag: string | undefined, e: BusEnv): string {
  const fromRunInfo = scopeFromCwdRunInfo(e.cwd);
  if (fromRunInfo.project) {
    const root = clean(rootFlag) ? resolveBusRoot(rootFlag, e) : (fromRunInfo.root ?? resolveBusRoot(undefined, e));
    return busFileFor(root, fromRunInfo.project, fromRunInfo.task);
  }
  if (isProjectHome(e.cwd)) return busFileFor(resolveBusRoot(rootFlag, e), basename(resolve(e.cwd)));
  const found = discoverBus(e.cwd);
  if (!found) throw cannotFindBus(e.cwd);
  return found;
}
