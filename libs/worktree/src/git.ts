import { existsSync } from 'node:fs';
import { isSafeGitRef } from '@app/storage';
import { WorktreeError } from './worktree.errors';

/** The message of the error every git call fails with when no `git` executable is on PATH. */
export const GIT_NOT_FOUND = 'git is not installed (not found on PATH)';

/** True for the error of a git call made where no `git` executable is on PATH. */
export function isGitMissing(err: unknown): boolean {
  return err instanceof WorktreeError && err.message === GIT_NOT_FOUND;
}

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

const MAX_BUFFER = 64 * 1024 * 1024;

/**
 * Runs the real `git` (no shell); resolves with the exit code instead of throwing on failure.
 * Through execa, required here and not at start-up (docs/decisions/design-and-libraries.md: short-lived
 * tool processes use execa, loaded where used; no exit cleanup handler, the caller owns its signals).
 */
export async function gitRaw(cwd: string, args: string[], env?: Record<string, string>): Promise<GitResult> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const execa = require('execa') as typeof import('execa');
  const r = await execa('git', args, { cwd, reject: false, cleanup: false, stripFinalNewline: false, maxBuffer: MAX_BUFFER, env: { GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', ...env } });
  const errno = (r as { code?: unknown }).code;
  if (typeof errno === 'string') {
    // spawn reports a missing working directory as ENOENT too
    const missing = errno === 'ENOENT' ? (existsSync(cwd) ? GIT_NOT_FOUND : `directory does not exist: ${cwd}`) : undefined;
    throw new WorktreeError('WORKTREE', missing ?? `git ${args[0]}: ${(r as { originalMessage?: string }).originalMessage ?? errno}`);
  }
  // no exit code and no signal: execa stopped reading (the output passed maxBuffer)
  if (r.failed && r.exitCode === undefined && !r.signal) throw new WorktreeError('WORKTREE', `git ${args[0]}: output larger than ${MAX_BUFFER} bytes`);
  // killed by a signal: a failed call like any other
  return { code: r.exitCode ?? 1, stdout: r.stdout, stderr: r.stderr };
}

/** Runs git and returns its trimmed stdout; a non-zero exit is a WorktreeError('WORKTREE'). */
export async function git(cwd: string, args: string[], env?: Record<string, string>): Promise<string> {
  const r = await gitRaw(cwd, args, env);
  if (r.code !== 0) {
    const detail = (r.stderr.trim() || r.stdout.trim()).split('\n')[0];
    throw new WorktreeError('WORKTREE', `git ${args[0]} failed: ${detail}`);
  }
  return r.stdout.replace(/\n$/, '');
}

/**
 * The one rule for a ref or revision handed to git (@app/storage isSafeGitRef), wherever it came
 * from (a flag, an API field or a WORKTREE.yaml). Returns the value. A bad value
 * given by the caller is INVALID_INPUT; one read from a WORKTREE.yaml (`fromRecord`) is a broken
 * record (WORKTREE), named as such.
 */
export function checkRefArg(value: unknown, what: string, fromRecord = false): string {
  const text = typeof value === 'string' ? value : '';
  if (!isSafeGitRef(text)) {
    const line = `${what} ${JSON.stringify(text).slice(0, 80)} is not a valid git ref`;
    throw fromRecord ? new WorktreeError('WORKTREE', `WORKTREE.yaml: ${line}`) : new WorktreeError('INVALID_INPUT', line);
  }
  return text;
}

/** The commit a ref names (`git rev-parse --verify --end-of-options <ref>^{commit}`); INVALID_INPUT with one line when it names none. */
export async function resolveCommit(repo: string, ref: string, what: string): Promise<string> {
  checkRefArg(ref, what);
  const r = await gitRaw(repo, ['rev-parse', '--verify', '-q', '--end-of-options', `${ref}^{commit}`]);
  if (r.code !== 0) throw new WorktreeError('INVALID_INPUT', `${what} ${JSON.stringify(ref)} is not a commit in ${repo}`);
  return r.stdout.trim();
}

/** The top level of the repository containing `dir` (its main working tree, even from a linked worktree). */
export async function repoRoot(dir: string): Promise<string> {
  const r = await gitRaw(dir, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
  if (r.code !== 0) throw new WorktreeError('INVALID_INPUT', `not a git repository: ${dir}`);
  const common = r.stdout.trim();
  const top = await gitRaw(common, ['rev-parse', '--is-bare-repository']);
  if (top.stdout.trim() === 'true') throw new WorktreeError('INVALID_INPUT', `bare repositories are not supported: ${dir}`);
  // <main>/.git is the common dir of a normal repository (from a linked worktree too)
  if (/\/\.git\/?$/.test(common)) return common.replace(/\/\.git\/?$/, '');
  return git(dir, ['rev-parse', '--show-toplevel']);
}

export async function gitCommonDir(repo: string): Promise<string> {
  return git(repo, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
}
