import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Runs the real git in `cwd` and returns its trimmed stdout (throws on a non-zero exit). */
export function gitSync(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0' } }).trimEnd();
}

/** A real repository on branch `main` with one commit holding `shared.txt` and `README.md`. */
export function makeRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  gitSync(dir, 'init', '-q', '-b', 'main');
  gitSync(dir, 'config', 'user.email', 'test@example.com');
  gitSync(dir, 'config', 'user.name', 'Test');
  gitSync(dir, 'config', 'commit.gpgsign', 'false');
  writeFileSync(join(dir, 'shared.txt'), 'line one\nline two\nline three\n');
  writeFileSync(join(dir, 'README.md'), '# demo\n');
  gitSync(dir, 'add', '-A');
  gitSync(dir, 'commit', '-q', '-m', 'initial');
  return dir;
}
