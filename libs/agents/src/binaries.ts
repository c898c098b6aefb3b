import { execFile } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { AgentError } from './agents.errors';

/**
 * Resolves a command the way spawn will (against the PATH of the environment it gets), telling
 * "not found" from "found but not executable" so the runner can report a fatal error before
 * writing anything.
 */
export function findExecutable(command: string, env: Record<string, string | undefined> = process.env, cwd = process.cwd()): string {
  const candidates = command.includes('/')
    ? [isAbsolute(command) ? command : resolve(cwd, command)]
    : (env.PATH ?? '').split(delimiter).filter((d) => d !== '').map((dir) => join(dir, command));
  let notExecutable: string | undefined;
  for (const candidate of candidates) {
    let isFile: boolean;
    try {
      isFile = statSync(candidate).isFile();
    } catch {
      continue;
    }
    if (!isFile) continue;
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      notExecutable ??= candidate;
    }
  }
  if (notExecutable) throw new AgentError('NOT_EXECUTABLE', `agent cli "${command}" is not executable: permission denied: ${notExecutable}`);
  throw new AgentError('BINARY_NOT_FOUND', `agent cli "${command}" not found in PATH`);
}

export interface CommandOutput {
  stdout: string;
  stderr: string;
}

/** Runs a short command (stdin closed) and collects its output; rejects on a non-zero exit or timeout. */
export function runShortCommand(path: string, args: string[], opts: { env?: Record<string, string | undefined>; timeoutMs: number }): Promise<CommandOutput> {
  return new Promise((resolvePromise, reject) => {
    const child = execFile(
      path,
      args,
      { env: opts.env as NodeJS.ProcessEnv | undefined, timeout: opts.timeoutMs, killSignal: 'SIGKILL', maxBuffer: 4 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => (err ? reject(err) : resolvePromise({ stdout, stderr })),
    );
    child.stdin?.end();
  });
}

/**
 * `<command> --version`, trimmed stdout (or stderr when stdout is empty); '' when it fails or
 * takes longer than the timeout (10 s upstream).
 */
export async function detectCliVersion(path: string, opts: { env?: Record<string, string | undefined>; timeoutMs?: number } = {}): Promise<string> {
  try {
    const { stdout, stderr } = await runShortCommand(path, ['--version'], { env: opts.env, timeoutMs: opts.timeoutMs ?? 10_000 });
    return stdout.trim() || stderr.trim();
  } catch {
    return '';
  }
}

/** Minimum CLI versions; older ones only deserve a warning. */
export const MIN_CLI_VERSIONS: Readonly<Record<string, string>> = { claude: '1.0.0', codex: '0.1.0', gemini: '0.1.0' };

/** True when the first `x.y.z` in `detected` is at least `min`, or when there is none to compare. */
export function isVersionAtLeast(detected: string, min: string): boolean {
  const found = /v?(\d+)\.(\d+)\.(\d+)/.exec(detected);
  if (!found) return true;
  const have = found.slice(1, 4).map(Number);
  const want = min.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    if (have[i] !== want[i]) return have[i] > want[i];
  }
  return true;
}
