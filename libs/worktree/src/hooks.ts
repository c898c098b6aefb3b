import { spawn } from 'node:child_process';
import { WorktreeError } from './worktree.errors';

export interface HookResult {
  code: number;
  output: string;
}

const OUTPUT_LIMIT = 64 * 1024;

/**
 * The owner watchdog (issue #31, docs/decisions.md): runs as the leader of its own process group
 * with a pipe from the owner on fd 0. The command runs in the same group with stdin from
 * /dev/null; a watcher reads the pipe, and EOF (the owner exited, even by SIGKILL: the kernel
 * closes its end) kills the whole group. `$1` is the command. The watcher outlives the command:
 * the owner kills the group once the watchdog exits, and an owner killed before it could (a
 * SIGKILL right after the command ended) leaves that to the watcher (issue #31).
 */
export const OWNER_WATCHDOG = [
  'exec 3<&0',
  '/bin/sh -c "$1" </dev/null 3<&- &',
  'c=$!',
  '(cat >/dev/null; kill -KILL 0) <&3 >/dev/null 2>&1 &',
  'exec 3<&-',
  'wait "$c"',
].join('\n');

export interface ShellOptions {
  /**
   * Run in a process group of its own that dies with this process (verify commands): killed when
   * this process exits for any reason, and once the command itself exits (nothing it started in
   * the group outlives it).
   */
  ownedGroup?: boolean;
  /** Called with the group's id (= the watchdog's pid) once it runs. */
  onGroup?: (pgid: number) => void;
}

/** Runs a config command through `sh -c` in `cwd`; resolves with its exit code and (tail of) output. */
export function runShell(command: string, cwd: string, env: Record<string, string>, opts: ShellOptions = {}): Promise<HookResult> {
  return new Promise((resolve, reject) => {
    const args = opts.ownedGroup ? ['-c', OWNER_WATCHDOG, 'conductor-watchdog', command] : ['-c', command];
    const child = spawn('/bin/sh', args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: [opts.ownedGroup ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      detached: opts.ownedGroup === true,
    });
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString()).slice(-OUTPUT_LIMIT);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.stdin?.on('error', () => undefined);
    if (opts.ownedGroup && child.pid) opts.onGroup?.(child.pid);
    child.on('error', (err) => reject(new WorktreeError('WORKTREE', `run ${JSON.stringify(command)}: ${err.message}`)));
    child.on('exit', () => {
      if (!opts.ownedGroup || !child.pid) return;
      try {
        process.kill(-child.pid, 'SIGKILL'); // what the command left running in its group
      } catch {
        // the group is already empty
      }
      child.stdin?.destroy();
    });
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), output }));
  });
}

export function lastLines(text: string, n = 20): string {
  return text.trimEnd().split('\n').slice(-n).join('\n');
}

/** A setup/teardown hook; a non-zero exit is a WorktreeError naming the hook. */
export async function runHook(kind: 'setup' | 'teardown', command: string | undefined, worktree: string, env: Record<string, string>, name?: string): Promise<void> {
  if (!command) return;
  const r = await runShell(command, worktree, { ...env, JRUN_WORKTREE: worktree });
  if (r.code !== 0) {
    const tail = lastLines(r.output);
    throw new WorktreeError('WORKTREE', `${kind} ${name ? `script ${name}` : `hook ${JSON.stringify(command)}`} failed with exit code ${r.code}${tail ? `: ${tail}` : ''}`);
  }
}
