/**
 * Approval of repository-provided setup (issue #35, docs/worktrees.md "Repository setup scripts"):
 * `.conductor-setup.sh` / `.conductor-teardown.sh` tracked in a repository run in a task's
 * worktree only once the user approved that exact content (its sha256) for that repository with
 * `run-agent approve-setup`. Approvals live in the user's state folder (outside any repository,
 * so a repository cannot approve itself; hidden from sandboxed agents with the rest of the home).
 * Config hooks (`worktree.setup`/`teardown`) need no approval: the config is the user's own.
 */
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { conductorStateDir, openRegularFile, parseYaml, readFdRange, stringifyYaml, withFileLock, writeFileAtomic } from '@app/storage';
import { errorText } from '@app/storage';
import { WorktreeError } from './worktree.errors';

export type RepoScriptKind = 'setup' | 'teardown';

/** The repository-relative paths of the scripts a repository may provide. */
export const REPO_SCRIPT_FILES: Record<RepoScriptKind, string> = { setup: '.conductor-setup.sh', teardown: '.conductor-teardown.sh' };

/** Scripts are run as one `sh -c` argument (the exact bytes that were hashed): Linux caps one argument at 128 KiB. */
const MAX_SCRIPT_BYTES = 64 * 1024;

export interface RepoScript {
  kind: RepoScriptKind;
  path: string;
  sha256: string;
  content: string;
}

export interface ApprovalEntry {
  repo: string;
  path: string;
  sha256: string;
  approved_at: string;
}

export function approvalsFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(conductorStateDir(env), 'setup-approvals.yaml');
}

function toScript(kind: RepoScriptKind, bytes: Buffer, where: string): RepoScript {
  const path = REPO_SCRIPT_FILES[kind];
  if (bytes.length > MAX_SCRIPT_BYTES) throw new WorktreeError('INVALID_INPUT', `repository ${kind} script ${where} is larger than ${MAX_SCRIPT_BYTES} bytes`);
  if (bytes.includes(0)) throw new WorktreeError('INVALID_INPUT', `repository ${kind} script ${where} contains NUL bytes`);
  return { kind, path, sha256: createHash('sha256').update(bytes).digest('hex'), content: bytes.toString('utf8') };
}

/**
 * The script of `kind` in a checked-out tree (what would run there), or undefined. Read through
 * safe-read with `noFollow`: a symbolic link, FIFO, device or folder in its place is refused.
 */
export function scriptInTree(dir: string, kind: RepoScriptKind): RepoScript | undefined {
  const file = join(dir, REPO_SCRIPT_FILES[kind]);
  let opened: ReturnType<typeof openRegularFile>;
  try {
    opened = openRegularFile(file, { noFollow: true });
  } catch (err) {
    throw new WorktreeError('INVALID_INPUT', `repository ${kind} script ${errorText(err)}`);
  }
  if (!opened) return undefined;
  try {
    // one byte past the cap is enough for toScript to refuse a larger file
    return toScript(kind, readFdRange(opened.fd, 0, Math.min(opened.stat.size, MAX_SCRIPT_BYTES + 1)), file);
  } finally {
    closeSync(opened.fd);
  }
}

function gitBytes(repo: string, args: string[]): Promise<{ code: number; out: Buffer }> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd: repo, encoding: 'buffer', maxBuffer: 4 * MAX_SCRIPT_BYTES, env: { ...process.env, LC_ALL: 'C' } }, (err, stdout) => {
      if (err && typeof (err as NodeJS.ErrnoException).code === 'string') return reject(new WorktreeError('WORKTREE', `git ${args[0]}: ${err.message}`));
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout });
    });
  });
}

/** The repository's scripts at `commit` (what a new worktree from it checks out). */
export async function scriptsAtCommit(repo: string, commit: string): Promise<RepoScript[]> {
  const out: RepoScript[] = [];
  for (const kind of ['setup', 'teardown'] as const) {
    const path = REPO_SCRIPT_FILES[kind];
    const ls = await gitBytes(repo, ['ls-tree', '-z', '--end-of-options', commit, '--', path]);
    if (ls.code !== 0) throw new WorktreeError('INVALID_INPUT', `${JSON.stringify(commit)} is not a commit in ${repo}`);
    const entry = ls.out.toString('utf8').split('\0')[0];
    if (!entry) continue;
    const [mode, type, oid] = entry.split('\t')[0].split(' ');
    if (type !== 'blob' || (mode !== '100644' && mode !== '100755')) throw new WorktreeError('INVALID_INPUT', `repository ${kind} script ${path} at ${commit.slice(0, 12)} is not a regular file`);
    const blob = await gitBytes(repo, ['cat-file', 'blob', oid]);
    if (blob.code !== 0) throw new WorktreeError('WORKTREE', `git cat-file ${oid} failed in ${repo}`);
    out.push(toScript(kind, blob.out, `${path} at ${commit.slice(0, 12)}`));
  }
  return out;
}

/** The recorded approvals; an unreadable file is an error naming it (nothing is treated as approved). */
export function readApprovals(env: NodeJS.ProcessEnv = process.env): ApprovalEntry[] {
  const file = approvalsFile(env);
  if (!existsSync(file)) return [];
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new WorktreeError('IO', `read ${file}: ${(err as Error).message}`);
  }
  const list = (doc as { approvals?: unknown } | null)?.approvals;
  if (!Array.isArray(list)) return [];
  return list.filter(
    (e): e is ApprovalEntry => !!e && typeof e.repo === 'string' && typeof e.path === 'string' && typeof e.sha256 === 'string' && /^[0-9a-f]{64}$/.test(e.sha256),
  );
}

export function isApproved(repo: string, script: RepoScript, approvals: ApprovalEntry[]): boolean {
  return approvals.some((a) => a.repo === repo && a.path === script.path && a.sha256 === script.sha256);
}

/** The command that approves a script (shown in the refusal). */
export function approveCommand(repo: string, ref: string, sha256: string): string {
  return `run-agent approve-setup --repo ${repo} --ref ${ref} --sha256 ${sha256}`;
}

/** INVALID_INPUT naming the first unapproved script, its sha256 and the command that approves it. */
export function assertApproved(repo: string, scripts: RepoScript[], ref: string, env: NodeJS.ProcessEnv = process.env): void {
  if (!scripts.length) return;
  const approvals = readApprovals(env);
  const missing = scripts.find((s) => !isApproved(repo, s, approvals));
  if (!missing) return;
  const was = approvals.some((a) => a.repo === repo && a.path === missing.path);
  throw new WorktreeError(
    'INVALID_INPUT',
    `repository ${missing.kind} script ${missing.path} (sha256 ${missing.sha256}) in ${repo} is ${was ? 'changed since its approval' : 'not approved'}; ` +
      `nothing was run; read it, then approve it with: ${approveCommand(repo, ref, missing.sha256)}`,
  );
}

/** Records approvals of `scripts` for `repo` (under a lock; atomic and fsync'd). Returns the new entries. */
export async function recordApprovals(repo: string, scripts: RepoScript[], env: NodeJS.ProcessEnv = process.env): Promise<ApprovalEntry[]> {
  const file = approvalsFile(env);
  mkdirSync(conductorStateDir(env), { recursive: true, mode: 0o700 });
  return withFileLock(`${file}.lock`, { timeoutMs: 30_000, pollMs: 20 }, () => {
    const current = readApprovals(env);
    const added: ApprovalEntry[] = [];
    for (const s of scripts) {
      if (isApproved(repo, s, current)) continue;
      const entry = { repo, path: s.path, sha256: s.sha256, approved_at: new Date().toISOString() };
      current.push(entry);
      added.push(entry);
    }
    if (added.length) writeFileAtomic(file, stringifyYaml({ approvals: current }));
    return added;
  });
}
