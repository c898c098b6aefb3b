import { IsolationRequest, isGitMissing, normalizePaths, repoRoot } from '@app/runner';
import { badRequest, unprocessable } from '../common/api-error';
import type { CreateTaskDto } from './dto/create-task.dto';

const REF = /^[A-Za-z0-9._/@^~{}-]{1,200}$/;

/**
 * `isolation`, `base`, `paths` of POST /api/v1/tasks, checked before anything is written: the
 * repository is project_root's (or the server's working directory's) and must be a git repository.
 */
export async function checkIsolation(body: CreateTaskDto, projectRoot: string | undefined): Promise<IsolationRequest | undefined> {
  const mode = body.isolation?.trim() ?? '';
  if (mode !== '' && mode !== 'worktree' && mode !== 'none') throw badRequest(`invalid isolation "${mode}": must be worktree or none`);
  if (mode !== 'worktree') {
    if (body.base !== undefined || body.paths !== undefined) throw badRequest('base and paths require isolation "worktree"');
    return mode === 'none' ? { worktree: false } : undefined;
  }
  const base = body.base?.trim() || undefined;
  if (base !== undefined && (!REF.test(base) || base.startsWith('-') || base.includes('..'))) throw badRequest(`invalid base "${base}"`);
  const paths = normalizePaths(body.paths);
  try {
    await repoRoot(projectRoot ?? process.cwd());
  } catch (err) {
    // the server's host lacks git: not the request's fault, and not "no repository" either
    if (isGitMissing(err)) throw unprocessable('isolation "worktree" needs git on the server: git is not installed (not found on PATH)');
    throw badRequest(`isolation "worktree" needs project_root inside a git repository: ${projectRoot ?? process.cwd()}`);
  }
  return { worktree: true, repo: projectRoot, base, paths };
}
