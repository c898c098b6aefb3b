import { assertApproved, checkRefArg, IsolationRequest, isGitMissing, normalizePaths, readWorktreeRecord, repoRoot, resolveBase, scriptsAtCommit } from '@app/worktree';
import { badRequest, unprocessable } from '../common/api-error';
import type { CreateTaskDto } from './dto/create-task.dto';

/**
 * `isolation`, `base`, `paths` of POST /api/v1/tasks, checked before anything is written: the
 * repository is project_root's (or the server's working directory's) and must be a git repository.
 * The repository and base resolved here travel down in `resolved`: the task loop does not resolve
 * them again (one lookup per start).
 */
export async function checkIsolation(body: CreateTaskDto, projectRoot: string | undefined, taskDir?: string): Promise<IsolationRequest | undefined> {
  const mode = body.isolation?.trim() ?? '';
  if (mode !== '' && mode !== 'worktree' && mode !== 'none') throw badRequest(`invalid isolation "${mode}": must be worktree or none`);
  if (mode !== 'worktree') {
    if (body.base !== undefined || body.paths !== undefined) throw badRequest('base and paths require isolation "worktree"');
    return mode === 'none' ? { worktree: false } : undefined;
  }
  const base = body.base?.trim() || undefined;
  if (base !== undefined) checkRefArg(base, 'base'); // RunnerError INVALID_INPUT: a 400
  const paths = normalizePaths(body.paths);
  let repo: string;
  try {
    repo = await repoRoot(projectRoot ?? process.cwd());
  } catch (err) {
    // the server's host lacks git: not the request's fault, and not "no repository" either
    if (isGitMissing(err)) throw unprocessable('isolation "worktree" needs git on the server: git is not installed (not found on PATH)');
    throw badRequest(`isolation "worktree" needs project_root inside a git repository: ${projectRoot ?? process.cwd()}`);
  }
  // resolved now, so a base that names no commit (`main^{tree}`, a typo) is a 400, not a failed start
  const { commit, branch } = await resolveBase(repo, base, 'base');
  // an unapproved or changed repository setup script is a 400 now, not a failed start later (docs/worktrees.md)
  if (!setupDone(taskDir)) assertApproved(repo, await scriptsAtCommit(repo, commit), commit);
  return { worktree: true, repo: projectRoot, base, paths, resolved: { repo, commit, branch } };
}


/** True when the task's worktree exists and its setup has run (no setup runs again: nothing to approve). */
function setupDone(taskDir: string | undefined): boolean {
  try {
    const rec = taskDir ? readWorktreeRecord(taskDir) : undefined;
    return rec?.setup_done === true && !rec.removed_at;
  } catch {
    return false; // a corrupt record: the start reports it; the scripts are checked anyway
  }
}
