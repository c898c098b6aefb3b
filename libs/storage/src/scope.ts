import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { generateTaskId, TASK_ID_PATTERN, validateProjectId, validateTaskId } from './ids';
import { PROJECT_BUS_FILE, RUN_INFO_FILE, RUNS_DIR_NAME } from './layout-names';
import { readRunInfo } from './run-info';
import { parseYaml, stringifyYaml } from './lazy-yaml';
import { readRecordText } from './safe-read';

/** Project/task/run scope derived from env vars or folders (cli-storage.md §0.1). */
export interface Scope {
  project?: string;
  task?: string;
  run?: string;
  root?: string;
}

/** `$JRUN_TASK_FOLDER=<…>/<project>/<task>` → project = parent name, task = name. */
export function scopeFromTaskFolder(taskFolder: string | undefined): Scope | undefined {
  if (!taskFolder || taskFolder.trim() === '') return undefined;
  const dir = resolve(taskFolder.trim());
  return { project: basename(dirname(dir)), task: basename(dir), root: dirname(dirname(dir)) };
}

/** `$JRUN_RUN_FOLDER=<…>/<project>/<task>/runs/<run>` → all three, only when the grandparent is `runs`. */
export function scopeFromRunFolder(runFolder: string | undefined): Scope | undefined {
  if (!runFolder || runFolder.trim() === '') return undefined;
  const dir = resolve(runFolder.trim());
  const runsDir = dirname(dir);
  if (basename(runsDir) !== RUNS_DIR_NAME) return undefined;
  const taskDir = dirname(runsDir);
  return { project: basename(dirname(taskDir)), task: basename(taskDir), run: basename(dir), root: dirname(dirname(taskDir)) };
}

/** Walks up from `cwd` to the first run-info.yaml with project and task ids ("CWD run-info"). */
export function scopeFromRunInfoUpwards(cwd: string): Scope | undefined {
  let dir = resolve(cwd);
  for (;;) {
    const path = join(dir, RUN_INFO_FILE);
    if (existsSync(path)) {
      try {
        const info = readRunInfo(path);
        if (info.project_id && info.task_id) {
          const inRuns = basename(dirname(dir)) === RUNS_DIR_NAME;
          return { project: info.project_id, task: info.task_id, run: info.run_id, root: inRuns ? dirname(dirname(dirname(dirname(dir)))) : undefined };
        }
      } catch {
        // unreadable: keep walking up
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The CWD is a project folder: it holds at least one sub-folder named like a task id. */
export function isProjectHome(cwd: string): boolean {
  try {
    return readdirSync(cwd, { withFileTypes: true }).some((e) => e.isDirectory() && TASK_ID_PATTERN.test(e.name));
  } catch {
    return false;
  }
}

const PROJECT_ROOT_MARKERS = ['.git', 'go.mod', 'package.json', 'pyproject.toml', 'Cargo.toml', 'build.gradle', 'pom.xml', 'Makefile', 'README.md', 'README.rst', 'README'];

/** Walks up until a folder holds a project marker (.git, package.json, …); else `cwd` itself. */
export function findSourceProjectRoot(cwd: string): string {
  let dir = resolve(cwd);
  for (;;) {
    if (PROJECT_ROOT_MARKERS.some((m) => existsSync(join(dir, m)))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return resolve(cwd);
    dir = parent;
  }
}

/** Scans `<root>/*\/home-folders.md` for a `project_root` equal to `sourceRoot`. */
export function findProjectByHomeFolder(root: string, sourceRoot: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
  } catch {
    return undefined;
  }
  for (const name of names) {
    try {
      validateProjectId(name);
      const doc = parseYaml(readRecordText(join(root, name, 'home-folders.md'))) as { project_root?: unknown } | null;
      if (doc && doc.project_root === sourceRoot) return name;
    } catch {
      // invalid id, missing or unreadable file: not this one
    }
  }
  return undefined;
}

/**
 * Project inference: $JRUN_PROJECT_ID → CWD is a project home → home-folders.md match.
 * Undefined when nothing matches (callers report `cannot infer project: …`).
 */
export function inferProjectId(opts: { env?: NodeJS.ProcessEnv; cwd?: string; root: string }): string | undefined {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  if (env.JRUN_PROJECT_ID && env.JRUN_PROJECT_ID.trim() !== '') return env.JRUN_PROJECT_ID.trim();
  if (isProjectHome(cwd)) return basename(resolve(cwd));
  return findProjectByHomeFolder(opts.root, findSourceProjectRoot(cwd));
}

/** Empty → a generated id (`generated: true`, callers print `task: <id>` to stderr); else validated. */
export function resolveTaskId(value: string | undefined, now: Date = new Date()): { taskId: string; generated: boolean } {
  if (value === undefined || value.trim() === '') return { taskId: generateTaskId(now), generated: true };
  return { taskId: validateTaskId(value.trim()), generated: false };
}

export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

// ---- project homes (cli-storage.md §3.9) ----

export const HOME_FOLDERS_FILE = 'home-folders.md';

export interface HomeFolder {
  path: string;
  description?: string;
}

/** `home-folders.md` is YAML despite its extension. */
export interface HomeFolders {
  project_root: string;
  source_folders?: HomeFolder[];
  additional_folders?: HomeFolder[];
}

/** Suggested project id for a folder: its lower-cased name, non-alphanumeric runs → one `-`. */
export function suggestProjectId(dir: string): string {
  return basename(resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

export function readHomeFolders(root: string, projectId: string): HomeFolders | undefined {
  try {
    const doc = parseYaml(readRecordText(join(root, validateProjectId(projectId), HOME_FOLDERS_FILE))) as HomeFolders | null;
    return doc && typeof doc.project_root === 'string' ? doc : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Links a project to its source folder: creates `<root>/<id>/`, (over)writes home-folders.md with
 * `project_root: <dir>` (other keys of an existing file are kept) and creates an empty project bus
 * when missing. Returns the project folder.
 */
export function initProjectHome(root: string, projectId: string, projectRoot: string): string {
  validateProjectId(projectId);
  const projectDir = join(root, projectId);
  mkdirSync(projectDir, { recursive: true });
  const previous = readHomeFolders(root, projectId);
  const doc: HomeFolders = { ...(previous ?? {}), project_root: resolve(projectRoot) };
  writeFileSync(join(projectDir, HOME_FOLDERS_FILE), stringifyYaml(doc, { lineWidth: 0 }), { mode: 0o644 });
  const bus = join(projectDir, PROJECT_BUS_FILE);
  if (!existsSync(bus)) writeFileSync(bus, '', { mode: 0o644 });
  return projectDir;
}
