import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { AppConfig, RunsLayout } from '@app/storage';
import { errorText } from '@app/storage';
import { removeTaskWorktree, taskBranch, WORKTREES_DIR } from './create';
import { gitCommonDir, gitRaw } from './git';
import { listWorktrees, removeWorktreeFolder } from './list';
import { releasePort } from './port';
import { readWorktreeRecord } from './record';
import { registeredRepos } from './task-worktree';

export interface WorktreeGcOptions {
  /** The runs root's layout (of the composition root). */
  layout: RunsLayout;
  /** Only tasks older than this (task folder mtime, or worktree mtime for deleted tasks) are collected. */
  cutoff: Date;
  /** Also remove worktrees whose branch is not merged (the branch itself is kept). */
  force?: boolean;
  dryRun?: boolean;
  projects?: string[];
  config?: AppConfig;
}

export interface WorktreeGcEntry {
  path: string;
  task_id: string;
  reason: 'merged' | 'task deleted' | 'forced';
}

export interface WorktreeGcReport {
  removed: WorktreeGcEntry[];
  kept_unmerged: string[];
  warnings: string[];
}

function mtime(path: string): number {
  try {
    return statSync(path).mtime.getTime();
  } catch {
    return 0;
  }
}

/** Uncommitted work in a worktree is never "merged", whatever its branch says. */
async function isDirty(path: string): Promise<boolean> {
  if (!existsSync(path)) return false;
  const r = await gitRaw(path, ['status', '--porcelain']);
  return r.code !== 0 || r.stdout.trim() !== '';
}

async function isMerged(repo: string, branch: string, base: string, path: string): Promise<boolean> {
  if (!base || (await isDirty(path))) return false;
  const r = await gitRaw(repo, ['merge-base', '--is-ancestor', `refs/heads/${branch}`, `refs/heads/${base}`]);
  return r.code === 0;
}

/** A branch whose commits all reached some other branch (for worktrees whose task folder is gone). */
async function mergedSomewhere(repo: string, branch: string, path: string): Promise<boolean> {
  if (await isDirty(path)) return false;
  const r2 = await gitRaw(repo, ['for-each-ref', '--format=%(refname:short)', '--contains', `refs/heads/${branch}`, 'refs/heads/']);
  if (r2.code !== 0) return false;
  return r2.stdout.split('\n').some((b) => b && b !== branch);
}

/**
 * Removes the worktrees of tasks older than the cutoff once their branch is merged (the branch
 * is deleted too) or their task folder is deleted; unmerged ones are kept unless `force`
 * (which removes the folder but keeps the branch, so no commit is lost).
 */
export async function gcWorktrees(opts: WorktreeGcOptions): Promise<WorktreeGcReport> {
  const report: WorktreeGcReport = { removed: [], kept_unmerged: [], warnings: [] };
  const { layout } = opts;
  const known = new Set<string>();
  const projects = opts.projects ?? (existsSync(layout.root) ? readdirSync(layout.root, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name) : []);
  for (const project of projects) {
    const projectDir = layout.projectDir(project);
    let tasks: string[] = [];
    try {
      tasks = readdirSync(projectDir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    } catch {
      continue;
    }
    for (const task of tasks) {
      const taskDir = join(projectDir, task);
      try {
        const rec = readWorktreeRecord(taskDir);
        if (!rec) continue;
        known.add(rec.path);
        if (rec.removed_at || mtime(taskDir) >= opts.cutoff.getTime()) continue;
        const merged = rec.merge_status === 'merged' || (await isMerged(rec.repo, rec.branch, rec.base_branch, rec.path));
        if (!merged && !opts.force) {
          report.kept_unmerged.push(rec.path);
          continue;
        }
        report.removed.push({ path: rec.path, task_id: rec.task_id, reason: merged ? 'merged' : 'forced' });
        if (!opts.dryRun) await removeTaskWorktree(taskDir, { config: opts.config, deleteBranch: merged });
      } catch (err) {
        report.warnings.push(`worktree of ${taskDir}: ${errorText(err)}`);
      }
    }
  }
  if (opts.projects) return report;
  // worktrees whose task folder was deleted: found through the repositories this root used
  for (const repo of registeredRepos(layout.root)) {
    try {
      if (!existsSync(repo)) continue;
      const dir = join(repo, WORKTREES_DIR);
      for (const wt of await listWorktrees(repo)) {
        if (!wt.path.startsWith(`${dir}/`) || known.has(wt.path)) continue;
        const taskId = basename(wt.path);
        if (mtime(wt.path) >= opts.cutoff.getTime() && existsSync(wt.path)) continue;
        const branch = taskBranch(taskId);
        const merged = await mergedSomewhere(repo, branch, wt.path);
        if (!merged && !opts.force) {
          report.kept_unmerged.push(wt.path);
          continue;
        }
        report.removed.push({ path: wt.path, task_id: taskId, reason: merged ? 'task deleted' : 'forced' });
        if (opts.dryRun) continue;
        await removeWorktreeFolder(repo, wt.path);
        if (merged) await gitRaw(repo, ['branch', '-D', '--end-of-options', branch]);
        releasePort(await gitCommonDir(repo), taskId);
      }
    } catch (err) {
      report.warnings.push(`worktrees of ${repo}: ${errorText(err)}`);
    }
  }
  return report;
}
