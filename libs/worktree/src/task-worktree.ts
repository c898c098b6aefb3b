import type { BusWriters } from '@app/messagebus';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AppConfig, parseYaml, TASK_CONFIG_FILE } from '@app/storage';
import { ensureTaskWorktree, normalizePaths, ResolvedWorktreeBase, resolveWorktreeBase, worktreeEnv, WorktreeRequest } from './create';
import { warnOverlaps } from './overlap';
import { readWorktreeRecord, WorktreeRecord } from './record';

/** How a task or job asks for isolation: `worktree: true` (flag, API), else config, else an existing worktree. */
export interface IsolationRequest extends WorktreeRequest {
  worktree?: boolean;
  /** The repository and base a door already resolved (the API's request check): the loop does not resolve them again. */
  resolved?: ResolvedWorktreeBase;
}

/** The run-info.yaml fields of a run in a worktree. */
export interface WorktreeFields {
  worktree: string;
  branch: string;
  base_commit: string;
}

export interface PreparedWorktree {
  cwd: string;
  env: Record<string, string>;
  fields: WorktreeFields;
  record: WorktreeRecord;
}

/** `defaults.isolation`, overridden per agent (`agents.<name>.isolation`). */
export function configIsolation(config: AppConfig | undefined, agent: string | undefined): boolean {
  if (!config) return false;
  const name = agent || config.defaults?.agent;
  const agentCfg = name ? (config.agents[name] ?? Object.values(config.agents).find((a) => a.type === name)) : undefined;
  return (agentCfg?.isolation ?? config.defaults?.isolation) === 'worktree';
}

/** `paths:` of TASK-CONFIG.yaml (declared paths for overlap warnings), [] when absent. */
function declaredPaths(taskDir: string): string[] {
  const path = join(taskDir, TASK_CONFIG_FILE);
  if (!existsSync(path)) return [];
  try {
    const doc = parseYaml(readFileSync(path, 'utf8')) as { paths?: unknown } | null;
    return Array.isArray(doc?.paths) ? doc.paths.map(String) : [];
  } catch {
    return [];
  }
}

/** Runs roots remember the repositories they made worktrees in, so gc finds the worktrees of deleted tasks. */
export const REPO_REGISTRY_FILE = '.worktree-repos';

function registerRepo(root: string, repo: string): void {
  const path = join(root, REPO_REGISTRY_FILE);
  const known = existsSync(path) ? readFileSync(path, 'utf8').split('\n') : [];
  if (!known.includes(repo)) appendFileSync(path, `${repo}\n`, { mode: 0o644 });
}

export function registeredRepos(root: string): string[] {
  const path = join(root, REPO_REGISTRY_FILE);
  if (!existsSync(path)) return [];
  return [...new Set(readFileSync(path, 'utf8').split('\n').filter((l) => l.startsWith('/')))];
}

export function prepared(rec: WorktreeRecord): PreparedWorktree {
  return {
    cwd: rec.path,
    env: worktreeEnv(rec),
    fields: { worktree: rec.path, branch: rec.branch, base_commit: rec.base_commit },
    record: rec,
  };
}

export interface TaskWorktreeOptions {
  root: string;
  /** Opens the task buses an overlap warning goes to (the composition root's factory). */
  writers: BusWriters;
  projectId: string;
  taskId: string;
  taskDir: string;
  isolation?: IsolationRequest;
  config?: AppConfig;
  agent?: string;
  cwd?: string;
  /** What checkTaskWorktree resolved at the door: prepareTaskWorktree does not resolve it again. */
  resolved?: ResolvedWorktreeBase;
}

function wantsWorktree(opts: TaskWorktreeOptions, existing: WorktreeRecord | undefined): boolean {
  const live = !!existing && !existing.removed_at && existing.merge_status !== 'merged';
  return opts.isolation?.worktree ?? (live || configIsolation(opts.config, opts.agent));
}

/**
 * What {@link prepareTaskWorktree} would refuse for a task without a worktree yet (declared paths
 * outside the repository, no repository, a base that names no commit), checked before anything
 * is written: WorktreeError INVALID_INPUT with one line. Reads only (issue #29: a bad --base used
 * to leave the task folder behind). Returns the repository and base it resolved (undefined when
 * there is nothing to make): pass it to prepareTaskWorktree as `resolved` so the start resolves
 * them once.
 */
export async function checkTaskWorktree(opts: TaskWorktreeOptions): Promise<ResolvedWorktreeBase | undefined> {
  const existing = readWorktreeRecord(opts.taskDir);
  if (!wantsWorktree(opts, existing) || (existing && !existing.removed_at)) return undefined;
  normalizePaths(opts.isolation?.paths);
  return opts.isolation?.resolved ?? resolveWorktreeBase({ repo: opts.isolation?.repo, base: opts.isolation?.base }, opts.cwd);
}

/**
 * The worktree a task's runs use, created on first use: when asked (`--worktree`, API
 * `isolation: worktree`), when the config says so, or when the task already has one (resume).
 * Returns undefined for tasks that run in their working directory.
 */
export async function prepareTaskWorktree(opts: TaskWorktreeOptions): Promise<PreparedWorktree | undefined> {
  const existing = readWorktreeRecord(opts.taskDir);
  if (!wantsWorktree(opts, existing)) return undefined;
  const paths = opts.isolation?.paths?.length ? opts.isolation.paths : declaredPaths(opts.taskDir);
  const rec = await ensureTaskWorktree({
    projectId: opts.projectId,
    taskId: opts.taskId,
    taskDir: opts.taskDir,
    request: { repo: opts.isolation?.repo, base: opts.isolation?.base, paths },
    cwd: opts.cwd,
    config: opts.config,
    resolved: opts.resolved,
  });
  registerRepo(opts.root, rec.repo);
  if (!existing) await warnOverlaps(dirname(opts.taskDir), rec, opts.writers);
  return prepared(rec);
}

/**
 * A sub-agent job runs in its own task's worktree when it has one (or asks with `--worktree`),
 * else in the worktree of the task that started it (`$JRUN_TASK_FOLDER` of the calling agent).
 */
export async function prepareJobWorktree(opts: TaskWorktreeOptions & { parentTaskDir?: string }): Promise<PreparedWorktree | undefined> {
  if (opts.isolation?.worktree) return prepareTaskWorktree(opts);
  if (opts.cwd) return undefined;
  const own = readWorktreeRecord(opts.taskDir);
  if (own && !own.removed_at && existsSync(own.path)) return prepared(own);
  if (opts.parentTaskDir && opts.parentTaskDir !== opts.taskDir) {
    const parent = readWorktreeRecord(opts.parentTaskDir);
    if (parent && !parent.removed_at && existsSync(parent.path)) return prepared(parent);
  }
  return prepareTaskWorktree(opts);
}
