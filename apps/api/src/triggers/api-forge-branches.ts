import { Inject, Injectable } from '@nestjs/common';
import { checkRefArg, commitTaskLeftovers, git, gitRaw, pushTaskBranch, readWorktreeRecord } from '@app/worktree';
import { type ForgeBranches, type TaskBranch, TriggerError } from '@app/triggers';
import { API_CONTEXT, ApiContext } from '../common/api-context';

/** The pull-request side's git operations, on the task's worktree record (docs/worktrees.md). */
@Injectable()
export class ApiForgeBranches implements ForgeBranches {
  constructor(@Inject(API_CONTEXT) private readonly ctx: ApiContext) {}

  async readyBranch(projectId: string, taskId: string): Promise<TaskBranch | undefined> {
    const dir = this.ctx.layout.taskDir(projectId, taskId);
    await commitTaskLeftovers(dir); // nothing when the task has no worktree
    const rec = readWorktreeRecord(dir);
    if (!rec || rec.removed_at) return undefined;
    const branch = checkRefArg(rec.branch, 'branch', true);
    const since = rec.base_branch ? `refs/heads/${checkRefArg(rec.base_branch, 'base_branch', true)}` : checkRefArg(rec.base_commit, 'base_commit', true);
    // the commits a pull request would propose: on the task's branch, not in its base
    const log = await git(rec.repo, ['log', '--max-count=50', '--format=%s', '--end-of-options', `${since}..refs/heads/${branch}`]);
    return { repo: rec.repo, branch, base_branch: rec.base_branch, commits: log.split('\n').filter((l) => l.trim() !== '') };
  }

  /** The remote's URL as configured (before `url.<base>.insteadOf` rewriting: a mirror still names its GitHub repository); a URL is itself. */
  async remoteUrl(repo: string, remote: string): Promise<string> {
    const r = await gitRaw(repo, ['config', '--get', `remote.${remote}.url`]);
    if (r.code === 0 && r.stdout.trim() !== '') return r.stdout.trim();
    if (/[:/]/.test(remote)) return remote;
    throw new TriggerError('BAD_REQUEST', `the repository has no remote named ${JSON.stringify(remote)}`);
  }

  push(repo: string, remote: string, branch: string): Promise<{ commit: string; updated: boolean }> {
    return pushTaskBranch(repo, remote, branch);
  }
}
