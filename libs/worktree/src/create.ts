import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AppConfig, withFileLock } from '@app/storage';
import { errorText } from '@app/storage';
import { WorktreeError } from './worktree.errors';
import { checkRefArg, git, gitCommonDir, gitRaw, repoRoot, resolveCommit } from './git';
import { runHook } from './hooks';
import { assertApproved, RepoScriptKind, scriptInTree, scriptsAtCommit } from './setup-approval';
import { releasePort, reservePort } from './port';
import { listWorktrees, removeWorktreeFolder } from './list';
import { readWorktreeRecord, updateWorktreeRecord, WorktreeRecord, writeWorktreeRecord } from './record';

/** What a task asks for: the repository (default: the working directory's), base ref and declared paths. */
export interface WorktreeRequest {
  repo?: string;
  base?: string;
  paths?: string[];
}

export interface EnsureWorktreeOptions {
  projectId: string;
  taskId: string;
  taskDir: string;
  request: WorktreeRequest;
  /** Where to look for the repository when `request.repo` is absent. */
  cwd?: string;
  config?: AppConfig;
  /** `request`'s repository and base as the door resolved them (checkTaskWorktree): not resolved again. */
  resolved?: ResolvedWorktreeBase;
}

/** A task's repository and base commit, resolved once per start (at the door) and passed down. */
export interface ResolvedWorktreeBase {
  repo: string;
  commit: string;
  /** The base's branch (the checked-out one for HEAD, the ref when it names a branch), else ''. */
  branch: string;
}

export const WORKTREES_DIR = join('.conductor', 'worktrees');
export const BRANCH_PREFIX = 'conductor/';
const REPO_LOCK_TIMEOUT_MS = 120_000;

export function worktreePath(repo: string, taskId: string): string {
  return join(repo, WORKTREES_DIR, taskId);
}

export function taskBranch(taskId: string): string {
  return `${BRANCH_PREFIX}${taskId}`;
}

/** Keeps `.conductor/` out of `git status` without touching tracked files (`<git-dir>/info/exclude`). */
function excludeConductorDir(commonDir: string): void {
  const path = join(commonDir, 'info', 'exclude');
  mkdirSync(join(commonDir, 'info'), { recursive: true });
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  if (text.split('\n').includes('/.conductor/')) return;
  appendFileSync(path, `${text === '' || text.endsWith('\n') ? '' : '\n'}/.conductor/\n`);
}

/** A worktree the runner itself registered and finished (not mid-`git worktree add`, folder intact). */
async function isUsable(repo: string, path: string, branch: string): Promise<boolean> {
  const entry = (await listWorktrees(repo)).find((w) => resolve(w.path) === resolve(path));
  if (!entry || entry.prunable || entry.locked === 'initializing') return false;
  if (entry.branch !== `refs/heads/${branch}`) return false;
  return (await gitRaw(path, ['rev-parse', '--verify', '-q', 'HEAD'])).code === 0;
}

async function branchExists(repo: string, branch: string): Promise<boolean> {
  return (await gitRaw(repo, ['show-ref', '--verify', '--quiet', `refs/heads/${branch}`])).code === 0;
}

/** The base commit (default HEAD) and its branch in `repo`; `label` names the base in errors (`--base`, `base`). */
export async function resolveBase(repo: string, base: string | undefined, label = '--base'): Promise<{ commit: string; branch: string }> {
  const ref = base?.trim() || 'HEAD';
  const commit = await resolveCommit(repo, ref, label);
  let branch = '';
  if (!base?.trim()) branch = (await gitRaw(repo, ['symbolic-ref', '--short', '-q', 'HEAD'])).stdout.trim();
  else if (await branchExists(repo, ref)) branch = ref;
  return { commit, branch };
}

/**
 * The repository of `request` (default: the one containing `cwd`) and its base commit; WorktreeError
 * INVALID_INPUT with one line when there is no repository or the base names no commit.
 */
export async function resolveWorktreeBase(request: WorktreeRequest, cwd?: string): Promise<ResolvedWorktreeBase> {
  const repo = await repoRoot(resolve(request.repo ?? cwd ?? process.cwd()));
  return { repo, ...(await resolveBase(repo, request.base)) };
}

/** Declared paths are repository-relative; `..`, absolute paths and empty entries are refused. */
export function normalizePaths(paths: string[] | undefined): string[] {
  const out: string[] = [];
  for (const raw of paths ?? []) {
    for (const part of raw.split(',')) {
      const p = part.trim().replace(/^\.\//, '').replace(/\/+$/, '');
      if (!p) continue;
      if (p.startsWith('/') || p.split('/').includes('..') || /[\0\n\r]/.test(p)) {
        throw new WorktreeError('INVALID_INPUT', `invalid path ${JSON.stringify(part.trim())}: must be relative to the repository, without ".."`);
      }
      if (!out.includes(p)) out.push(p);
    }
  }
  return out;
}

/**
 * Creates (or finds) the task's worktree on branch `conductor/<task-id>`. Idempotent and crash-safe:
 * the record is written only once git has finished, so a retry after a SIGKILL at any point
 * clears the leftovers and carries on; the setup hook is re-run until it has succeeded once.
 */
export async function ensureTaskWorktree(opts: EnsureWorktreeOptions): Promise<WorktreeRecord> {
  const paths = normalizePaths(opts.request.paths);
  const existing = readWorktreeRecord(opts.taskDir);
  const requested = async (): Promise<string> => opts.resolved?.repo ?? repoRoot(resolve(opts.request.repo ?? opts.cwd ?? process.cwd()));
  const repo = existing && !existing.removed_at ? existing.repo : await requested();
  if (opts.request.repo && existing && !existing.removed_at && (await requested()) !== existing.repo) {
    throw new WorktreeError('INVALID_INPUT', `task ${opts.taskId} already has a worktree in ${existing.repo}`);
  }
  const commonDir = await gitCommonDir(repo);
  const path = worktreePath(repo, opts.taskId);
  const branch = taskBranch(opts.taskId);
  let record = existing && !existing.removed_at ? existing : undefined;
  // resolved before anything is written: a base that names no commit leaves the repository as it was
  const base = record ? { commit: record.base_commit, branch: record.base_branch } : (opts.resolved ?? (await resolveBase(repo, opts.request.base)));
  // repository-provided scripts of the commit the worktree starts from must be approved before anything is made or run
  if (!record?.setup_done) assertApproved(repo, await scriptsAtCommit(repo, base.commit), base.commit);
  await withFileLock(join(commonDir, 'conductor-worktree.lock'), { timeoutMs: REPO_LOCK_TIMEOUT_MS, pollMs: 50 }, async () => {
    excludeConductorDir(commonDir);
    if (await isUsable(repo, path, branch)) {
      record ??= newRecord(opts, repo, path, branch, base, paths);
      return;
    }
    await removeWorktreeFolder(repo, path);
    mkdirSync(join(repo, WORKTREES_DIR), { recursive: true });
    if (await branchExists(repo, branch)) await git(repo, ['worktree', 'add', path, branch]);
    else await git(repo, ['worktree', 'add', '-b', branch, '--end-of-options', path, checkRefArg(base.commit, 'base_commit', true)]);
    record ??= newRecord(opts, repo, path, branch, base, paths);
  });
  const rec = record!;
  if (!rec.port) rec.port = await reservePort(commonDir, opts.taskId);
  if (paths.length && !existing) rec.paths = paths;
  delete rec.removed_at;
  writeWorktreeRecord(opts.taskDir, rec);
  if (!rec.setup_done) {
    const script = approvedScript(rec, 'setup');
    await runHook('setup', opts.config?.worktree?.setup, rec.path, worktreeEnv(rec));
    if (script) await runHook('setup', script.content, rec.path, worktreeEnv(rec), script.path);
    return updateWorktreeRecord(opts.taskDir, { setup_done: true, ...(script ? { setup_script: { path: script.path, sha256: script.sha256 } } : {}) });
  }
  return rec;
}

function newRecord(
  opts: EnsureWorktreeOptions,
  repo: string,
  path: string,
  branch: string,
  base: { commit: string; branch: string },
  paths: string[],
): WorktreeRecord {
  return {
    project_id: opts.projectId,
    task_id: opts.taskId,
    repo,
    path,
    branch,
    base_commit: base.commit,
    base_branch: base.branch,
    port: 0,
    paths,
    setup_done: false,
    created_at: new Date().toISOString(),
  };
}

/**
 * The repository's script of `kind` as checked out in the worktree (what runs), if approved for the
 * repository; an unapproved or changed one is INVALID_INPUT before anything runs. The exact bytes
 * that were hashed are what runs (`sh -c <content>`), so a change after the check is never run.
 */
function approvedScript(rec: WorktreeRecord, kind: RepoScriptKind) {
  const script = scriptInTree(rec.path, kind);
  if (script) assertApproved(rec.repo, [script], rec.base_commit);
  return script;
}

/** The variables every process in the worktree gets. */
export function worktreeEnv(rec: WorktreeRecord): Record<string, string> {
  return {
    JRUN_WORKTREE: rec.path,
    JRUN_BRANCH: rec.branch,
    JRUN_BASE_COMMIT: rec.base_commit,
    ...(rec.port ? { JRUN_PORT: String(rec.port) } : {}),
  };
}

/**
 * Removes the task's worktree folder (teardown hook first) and, with `deleteBranch`, its branch.
 * Safe to repeat after a crash: each step tolerates the previous one having happened.
 */
export async function removeTaskWorktree(taskDir: string, opts: { config?: AppConfig; deleteBranch?: boolean } = {}): Promise<void> {
  const rec = readWorktreeRecord(taskDir);
  if (!rec || rec.removed_at) return;
  if (existsSync(rec.path)) {
    try {
      const script = approvedScript(rec, 'teardown');
      await runHook('teardown', opts.config?.worktree?.teardown, rec.path, worktreeEnv(rec));
      if (script) await runHook('teardown', script.content, rec.path, worktreeEnv(rec), script.path);
    } catch (err) {
      throw new WorktreeError('WORKTREE', `remove worktree ${rec.path}: ${errorText(err)}`);
    }
  }
  await removeWorktreeFolder(rec.repo, rec.path);
  if (opts.deleteBranch) await gitRaw(rec.repo, ['branch', '-D', '--end-of-options', checkRefArg(rec.branch, 'branch', true)]);
  releasePort(await gitCommonDir(rec.repo), rec.task_id);
  updateWorktreeRecord(taskDir, { removed_at: new Date().toISOString() });
}
