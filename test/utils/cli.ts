import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const REPO_ROOT = join(__dirname, '..', '..');
export const RUN_AGENT = join(REPO_ROOT, 'bin', 'run-agent');
export const CONDUCTOR = join(REPO_ROOT, 'bin', 'conductor');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunCliOptions {
  /** The whole environment of the child (not merged with process.env). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Written to stdin, then stdin is closed; without it stdin is /dev/null. */
  input?: string;
  /** SIGKILL after this long (runCli: 60 s, startCli: 120 s); the result then has signal SIGKILL. */
  timeoutMs?: number;
  /** Executable to run (default bin/run-agent); a .js or bin/ script runs under this node. */
  bin?: string;
}

export interface StartedCli {
  child: ChildProcess;
  /** Output so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited and its pipes are drained. */
  done: Promise<CliResult>;
}

/** Starts a built CLI (bin/run-agent by default) in the background, collecting its output. */
export function startCli(args: string[], opts: RunCliOptions = {}): StartedCli {
  const child = spawn(process.execPath, [opts.bin ?? RUN_AGENT, ...args], {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  if (opts.input !== undefined) child.stdin!.end(opts.input);
  const done = new Promise<CliResult>((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, stdout: () => stdout, stderr: () => stderr, done };
}

/** Runs a built CLI (bin/run-agent by default) to completion and collects its output. */
export function runCli(args: string[], opts: RunCliOptions = {}): Promise<CliResult> {
  return startCli(args, { timeoutMs: 60_000, ...opts }).done;
}

/** The synchronous form of {@link runCli}, for the many short invocations of a bus or usage test. */
export function runCliSync(args: string[], opts: Omit<RunCliOptions, 'timeoutMs'> = {}): Omit<CliResult, 'signal'> {
  const r = spawnSync(process.execPath, [opts.bin ?? RUN_AGENT, ...args], { env: opts.env ?? process.env, cwd: opts.cwd, input: opts.input ?? '', encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
