import { basename, isAbsolute, relative, resolve } from 'node:path';
import { findProjectByHomeFolder, findSourceProjectRoot, isProjectHome, scopeFromRunFolder, scopeFromRunInfoUpwards, scopeFromTaskFolder } from '@app/storage';

export interface TaskScope {
  project?: string;
  task?: string;
}

function clean(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/** A cwd inside the runs root names its project (and task) by position. */
export function scopeFromCwdUnderRoot(cwd: string, root: string): TaskScope {
  const rel = relative(resolve(root), resolve(cwd));
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return {};
  const [project, task] = rel.split(/[\\/]/);
  return { project, task };
}

/**
 * D7: explicit flags win; otherwise the scope comes from JRUN_* variables (run folder, task
 * folder, then ids), then from the working directory (a run-info above it, its position inside
 * the runs root, a project home). A task is only taken from a source that agrees on the project.
 */
export function inferScope(flags: TaskScope, opts: { root?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}): TaskScope {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const project = clean(flags.project);
  const task = clean(flags.task);
  if (project && task) return { project, task };

  const envProject = clean(env.JRUN_PROJECT_ID);
  const candidates: Array<() => TaskScope | undefined> = [
    () => scopeFromRunFolder(env.JRUN_RUN_FOLDER),
    () => scopeFromTaskFolder(env.JRUN_TASK_FOLDER),
    () => (envProject ? { project: envProject, task: clean(env.JRUN_TASK_ID) } : undefined),
    () => scopeFromRunInfoUpwards(cwd),
    () => (opts.root ? scopeFromCwdUnderRoot(cwd, opts.root) : undefined),
    () => (isProjectHome(cwd) ? { project: basename(resolve(cwd)) } : undefined),
    // A source folder linked to a project by `run-agent project init` (home-folders.md, §3.9).
    () => (opts.root ? { project: findProjectByHomeFolder(opts.root, findSourceProjectRoot(cwd)) } : undefined),
  ];
  for (const candidate of candidates) {
    const found = candidate();
    if (!found?.project) continue;
    if (project && found.project !== project) continue;
    return { project: project ?? found.project, task: task ?? found.task };
  }
  return { project, task };
}
