import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BusWriter, type NewMessage } from '@app/messagebus';
import { writeRunInfo, ZERO_TIME, type RunInfo } from '@app/storage';

export const REPO = resolve(__dirname, '..', '..', '..');
export const RUN_AGENT = join(REPO, 'bin', 'run-agent');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A temp runs root and a temp HOME, so nothing touches ~/.run-agent. */
export class Sandbox {
  readonly dir = mkdtempSync(join(tmpdir(), 'ra-inspect-'));
  readonly root = join(this.dir, 'runs');
  readonly home = join(this.dir, 'home');
  private readonly children: ChildProcess[] = [];

  constructor() {
    mkdirSync(this.root, { recursive: true });
    mkdirSync(this.home, { recursive: true });
  }

  /** Environment without JRUN_* / root variables of the outer process. */
  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) {
      if (!/^(JRUN_|CONDUCTOR_|RUN_AGENT_ROOT$|MESSAGE_BUS$|TASK_FOLDER$|RUN_FOLDER$)/.test(k)) env[k] = v;
    }
    return { ...env, HOME: this.home, ...extra };
  }

  /** Runs the built bin/run-agent and collects its output. */
  run(args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Promise<CliResult> {
    return new Promise((done, fail) => {
      const child = spawn(process.execPath, [RUN_AGENT, ...args], { cwd: opts.cwd ?? this.dir, env: this.env(opts.env), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', fail);
      child.on('close', (code) => done({ code, stdout, stderr }));
    });
  }

  /** Starts a process the caller may use as a live pid; killed at cleanup. */
  spawnLive(command: string, args: string[] = [], env: Record<string, string> = {}): ChildProcess {
    const child = spawn(command, args, { stdio: 'ignore', env: { ...process.env, ...env } });
    this.children.push(child);
    return child;
  }

  livePid(): number {
    return this.spawnLive('sleep', ['300']).pid as number;
  }

  cleanup(): void {
    for (const child of this.children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The pid of a process that has already exited. */
export function deadPid(): number {
  return spawnSync('true').pid as number;
}

export function runInfo(project: string, task: string, runId: string, over: Partial<RunInfo> = {}): RunInfo {
  return {
    version: 1,
    run_id: runId,
    project_id: project,
    task_id: task,
    agent: 'claude',
    pid: 0,
    pgid: 0,
    start_time: new Date(Date.now() - 60_000),
    end_time: new Date(Date.now() - 30_000),
    exit_code: 0,
    status: 'completed',
    agent_version: '',
    ...over,
  };
}

/** Creates `<root>/<p>/<t>/runs/<run>/run-info.yaml` and returns the run folder. */
export function writeRun(root: string, project: string, task: string, runId: string, over: Partial<RunInfo> = {}): string {
  const dir = join(root, project, task, 'runs', runId);
  mkdirSync(dir, { recursive: true });
  writeRunInfo(join(dir, 'run-info.yaml'), runInfo(project, task, runId, over));
  return dir;
}

export function running(pid: number, startedMsAgo = 60_000): Partial<RunInfo> {
  return { pid, pgid: pid, status: 'running', exit_code: -1, end_time: ZERO_TIME, start_time: new Date(Date.now() - startedMsAgo) };
}

export async function post(busPath: string, messages: NewMessage[]): Promise<void> {
  const writer = new BusWriter(busPath);
  for (const m of messages) await writer.append(m);
  writer.close();
}

export const P = 'my-project';
export const T1 = 'task-20260101-120000-alpha';
export const T2 = 'task-20260101-120000-beta';
export const T3 = 'task-20260101-120000-gamma';
export const T4 = 'task-20260101-120000-delta';
export const T5 = 'task-20260101-120000-epsilon';
