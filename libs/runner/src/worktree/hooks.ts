import { spawn } from 'node:child_process';
import { RunnerError } from '../runner.errors';

export interface HookResult {
  code: number;
  output: string;
}

const OUTPUT_LIMIT = 64 * 1024;

/** Runs a config command through `sh -c` in `cwd`; resolves with its exit code and (tail of) output. */
export function runShell(command: string, cwd: string, env: Record<string, string>): Promise<HookResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', command], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString()).slice(-OUTPUT_LIMIT);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err) => reject(new RunnerError('WORKTREE', `run ${JSON.stringify(command)}: ${err.message}`)));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), output }));
  });
}

export function lastLines(text: string, n = 20): string {
  return text.trimEnd().split('\n').slice(-n).join('\n');
}

/** A setup/teardown hook; a non-zero exit is a RunnerError naming the hook. */
export async function runHook(kind: 'setup' | 'teardown', command: string | undefined, worktree: string, env: Record<string, string>): Promise<void> {
  if (!command) return;
  const r = await runShell(command, worktree, { ...env, JRUN_WORKTREE: worktree });
  if (r.code !== 0) {
    const tail = lastLines(r.output);
    throw new RunnerError('WORKTREE', `${kind} hook ${JSON.stringify(command)} failed with exit code ${r.code}${tail ? `: ${tail}` : ''}`);
  }
}
