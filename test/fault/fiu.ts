/**
 * libfiu (Debian fiu-utils) under the real built CLI: `fiu-run -x` preloads libfiu's POSIX wrappers,
 * so write/fsync/rename/open fail with the errno we choose (failinfo). Node's start-up opens and
 * writes files but never fsyncs or renames, so those points are enabled from the start; write and
 * open are enabled once the process waits on stdin (a FIFO: /proc/<pid>/syscall shows read(0)),
 * through libfiu's remote control (fiu-ctrl), failing only the next call (onetime).
 */
import { execFile, spawn } from 'node:child_process';
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CONDUCTOR, RUN_AGENT } from '../utils/cli';
import { announcedPort } from '../utils/ports';
import { waitFor } from '../utils/wait';

const run = promisify(execFile);

export const ERRNOS = { EIO: 5, ENOSPC: 28, EDQUOT: 122 } as const;
export type ErrnoName = keyof typeof ERRNOS;
export type FaultPoint = 'posix/io/sync/fsync' | 'posix/io/dir/rename' | 'posix/io/rw/write' | 'posix/io/oc/open';

export interface Fault {
  point: FaultPoint;
  errno: ErrnoName;
}

export interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Deterministic PRNG (mulberry32): FAULT_SEED replays a run. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const enableCmd = (f: Fault, onetime: boolean) => `enable name=${f.point},failnum=-1,failinfo=${ERRNOS[f.errno]}${onetime ? ',onetime=1' : ''}`;

function collect(child: ReturnType<typeof spawn>): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs bin/run-agent with `fault` enabled from the start (fsync, rename: node's start-up does neither). */
export function runWithFault(args: string[], fault: Fault | undefined, env: NodeJS.ProcessEnv): Promise<Outcome> {
  const fiu = fault ? ['-x', '-f', '', '-c', enableCmd(fault, false)] : ['-x', '-f', ''];
  return collect(spawn('fiu-run', [...fiu, RUN_AGENT, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
}

/**
 * Runs bin/run-agent with stdin on a FIFO: once the process blocks reading it (after start-up),
 * enables `fault` for the next call only, then writes `input` and closes the FIFO.
 */
export async function runWithFaultAfterStart(args: string[], fault: Fault, input: string, env: NodeJS.ProcessEnv, dir: string, id: string): Promise<Outcome> {
  const fifo = join(dir, `stdin-${id}`);
  await run('mkfifo', [fifo]);
  const ctl = join(dir, `fiu-ctl-${id}`);
  const child = spawn('sh', ['-c', 'f=$1; shift; exec "$@" < "$f"', 'sh', fifo, 'fiu-run', '-x', '-f', ctl, RUN_AGENT, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const done = collect(child);
  const writer = await open(fifo, 'w');
  try {
    const pid = child.pid!;
    // read(2) is syscall 0 on x86_64 and aarch64's is 63; fd 0 is the first argument
    await waitFor(`pid ${pid} blocked reading stdin`, async () => /^(0|63) 0x0 /.test(await readFile(`/proc/${pid}/syscall`, 'utf8').catch(() => '')), 30_000);
    await run('fiu-ctrl', ['-f', ctl, '-c', enableCmd(fault, true), String(pid)]);
    await writer.write(input);
  } finally {
    await writer.close();
  }
  return done;
}

export interface FiuServer {
  url: string;
  /** Arms `fault` for the next call only (onetime). */
  arm(fault: Fault): Promise<void>;
  /** Disarms `point` (a fault that did not fire stays armed otherwise). */
  disarm(point: FaultPoint): Promise<void>;
  stop(): Promise<void>;
}

/** bin/conductor under fiu-run with remote control: many faults in one long-lived process. */
export async function startServerUnderFiu(root: string, dir: string, apiKey: string, env: NodeJS.ProcessEnv): Promise<FiuServer> {
  const ctl = join(dir, 'fiu-ctl-server');
  const child = spawn('fiu-run', ['-x', '-f', ctl, CONDUCTOR, '--root', root, '--host', '127.0.0.1', '--port', '0', '--api-key', apiKey, '--disable-task-start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.resume();
  const port = await waitFor('the server announces its port', () => announcedPort(stdout) ?? (child.exitCode !== null ? Promise.reject(new Error(`server exited: ${stdout}`)) : undefined), 60_000);
  const ctrl = (cmd: string) => run('fiu-ctrl', ['-f', ctl, '-c', cmd, String(child.pid)]).then(() => undefined);
  return {
    url: `http://127.0.0.1:${port}`,
    arm: (fault) => ctrl(enableCmd(fault, true)),
    disarm: (point) => ctrl(`disable name=${point}`),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** `enable` command of libfiu's remote control for `fault` (onetime: the next call only). */
export const enableCommand = enableCmd;

/**
 * Spawns bin/run-agent under fiu-run with remote control (`<ctl>-<pid>` FIFOs) and no fault
 * enabled: the caller (or a command the process runs) arms faults later with fiu-ctrl. Its
 * children run without libfiu.
 * fiu-run execs the program, so the returned pid is the run-agent process.
 */
export function spawnUnderFiu(args: string[], env: NodeJS.ProcessEnv, ctl: string, timeoutMs = 60_000): { pid: number; done: Promise<Outcome> } {
  // libfiu stays in the CLI process only: its child processes start without it (no-fiu-in-children.js)
  const nodeOptions = `${env.NODE_OPTIONS ?? ''} --require ${join(__dirname, 'no-fiu-in-children.js')}`.trim();
  const child = spawn('fiu-run', ['-x', '-f', ctl, RUN_AGENT, ...args], { env: { ...env, NODE_OPTIONS: nodeOptions }, stdio: ['ignore', 'pipe', 'pipe'] });
  // a hung process is an outcome the caller sees (code null), not a test that never ends
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return { pid: child.pid!, done: collect(child).finally(() => clearTimeout(timer)) };
}
