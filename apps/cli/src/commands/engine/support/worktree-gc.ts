import { gcWorktrees, type WorktreeGcReport } from '@app/worktree';
import type { RunsLayout } from '@app/storage';
import { loadRunConfig } from '../job-common';

/**
 * The worktree part of `gc` (docs/worktrees.md): worktrees of tasks older than the cutoff go once
 * their branch is merged or their task is deleted; unmerged ones only with --force.
 */
export async function gcTaskWorktrees(
  layout: RunsLayout,
  opts: { cutoff: Date; dryRun: boolean; force: boolean; projects?: string[]; log(line: string): void; warn(line: string): void },
): Promise<WorktreeGcReport> {
  let config;
  try {
    config = loadRunConfig(undefined).config; // for the teardown hook
  } catch (err) {
    opts.warn(`warning: worktree teardown hooks skipped: ${(err as Error).message}`);
  }
  const report = await gcWorktrees({ layout, cutoff: opts.cutoff, force: opts.force, dryRun: opts.dryRun, projects: opts.projects, config });
  const verb = opts.dryRun ? '[dry-run] would remove' : 'removed';
  for (const r of report.removed) opts.log(`${verb} worktree ${r.path} (${r.reason})`);
  for (const path of report.kept_unmerged) opts.log(`kept worktree ${path} (branch not merged; --force removes it)`);
  for (const w of report.warnings) opts.warn(`warning: ${w}`);
  return report;
}
