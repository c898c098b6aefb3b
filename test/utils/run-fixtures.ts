/**
 * Run fixtures shared by the whole suite: a sandboxed runs root + HOME, run folders with a
 * run-info.yaml, live and dead processes standing in for agents.
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { BusWriter, type NewMessage } from '@app/messagebus';
import { RunInfo, writeRunInfo, ZERO_TIME } from '@app/storage';
import { REPO_ROOT, RUN_AGENT, runCli, type CliResult } from './cli';
import { fakeAgentsBinDir } from './fake-agents';

/** Variables of an outer run / server / real agent that must not leak into a sandboxed CLI. */
const OUTER_ENV = /^(JRUN_|FAKE_AGENT_|CONDUCTOR_|RUN_AGENT_ROOT$|MESSAGE_BUS$|TASK_FOLDER$|RUN_FOLDER$|ANTHROPIC_|OPENAI_|GEMINI_|PERPLEXITY_|XAI_)/;

/** A temp dir with a runs root and a HOME (nothing touches ~/.run-agent); fake agents first on PATH. */
export class Sandbox {
  readonly dir: string;
  readonly root: string;
  readonly home: string;
  private readonly children: ChildProcess[] = [];

  constructor(readonly project = 'proj') {
    this.dir = fs.mkdtempSync(path.join(tmpdir(), 'ra-sandbox-'));
    this.root = path.join(this.dir, 'runs');
    this.home = path.join(this.dir, 'home');
    fs.mkdirSync(this.root, { recursive: true });
    fs.mkdirSync(this.home, { recursive: true });
  }

  /** This process's environment without outer run/server variables, HOME in the sandbox, plus `extra`. */
  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!OUTER_ENV.test(k)) env[k] = v;
    const PATH = [fakeAgentsBinDir(), path.join(REPO_ROOT, 'bin'), ...(process.env.PATH ?? '').split(path.delimiter)].join(path.delimiter);
    return { ...env, HOME: this.home, PATH, ...extra };
  }

  /** Runs the built bin/run-agent in the sandbox (cwd: the sandbox dir). */
  run(args: string[], opts: { env?: Record<string, string>; cwd?: string; input?: string } = {}): Promise<CliResult> {
    return runCli(args, { bin: RUN_AGENT, cwd: opts.cwd ?? this.dir, env: this.env(opts.env), input: opts.input });
  }

  /** Appends one message (project defaults to the sandbox's) and returns its id. */
  async post(busPath: string, msg: Partial<NewMessage> & { type: string; body: string }): Promise<string> {
    const writer = new BusWriter(busPath);
    try {
      return (await writer.append({ project_id: this.project, task_id: '', run_id: '', ...msg })).msg_id;
    } finally {
      writer.close();
    }
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
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A finished (completed, exit 0) run of `claude` that started a minute ago; `over` wins. */
export function runInfo(project: string, task: string, runId: string, over: Partial<RunInfo> = {}): RunInfo {
  // one clock reading: two could straddle a millisecond and make the run last 30.001 s
  const now = Date.now();
  return {
    version: 1,
    run_id: runId,
    project_id: project,
    task_id: task,
    agent: 'claude',
    pid: 0,
    pgid: 0,
    start_time: new Date(now - 60_000),
    end_time: new Date(now - 30_000),
    exit_code: 0,
    status: 'completed',
    agent_version: '',
    ...over,
  };
}

/** Creates `<root>/<p>/<t>/runs/<run>/run-info.yaml` and returns the run folder. */
export function writeRun(root: string, project: string, task: string, runId: string, over: Partial<RunInfo> = {}): string {
  const dir = path.join(root, project, task, 'runs', runId);
  fs.mkdirSync(dir, { recursive: true });
  writeRunInfo(path.join(dir, 'run-info.yaml'), runInfo(project, task, runId, over));
  return dir;
}

/** Like {@link writeRun}, plus prompt and stdout/stderr files and the paths to them (a run as the runner leaves it). */
export function seedRun(root: string, p: string, t: string, runId: string, over: Partial<RunInfo> = {}, stdout = ''): string {
  const dir = path.join(root, p, t, 'runs', runId);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'agent-stdout.txt'), stdout);
  fs.writeFileSync(path.join(dir, 'agent-stderr.txt'), '');
  fs.writeFileSync(path.join(dir, 'prompt.md'), 'do it\n');
  return writeRun(root, p, t, runId, {
    agent: 'fake',
    process_ownership: 'managed',
    start_time: new Date('2026-01-01T12:00:00Z'),
    end_time: new Date('2026-01-01T12:01:00Z'),
    cwd: '/tmp',
    prompt_path: path.join(dir, 'prompt.md'),
    output_path: path.join(dir, 'output.md'),
    stdout_path: path.join(dir, 'agent-stdout.txt'),
    stderr_path: path.join(dir, 'agent-stderr.txt'),
    commandline: 'fake-command-agent',
    ...over,
  });
}

/** The fields of a run that is still running as `pid` (its own group), started `startedMsAgo` ago. */
export function running(pid: number, startedMsAgo = 60_000): Partial<RunInfo> {
  return { pid, pgid: pid, status: 'running', exit_code: -1, end_time: ZERO_TIME, start_time: new Date(Date.now() - startedMsAgo) };
}

/** A live process group (sleep) to stand for a running agent; kill it with {@link killGroup}. */
export function spawnSleeper(seconds = 60): ChildProcess {
  const child = spawn('sleep', [String(seconds)], { detached: true, stdio: 'ignore' });
  child.unref();
  return child;
}

export function runningFields(child: ChildProcess): Partial<RunInfo> {
  return { ...running(child.pid!, 0), start_time: new Date() };
}

export function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** The pid of a process that has already exited. */
export function deadPid(): number {
  return spawnSync('true').pid as number;
}

/** Appends messages to a bus file in order. */
export async function postMessages(busPath: string, messages: NewMessage[]): Promise<void> {
  const writer = new BusWriter(busPath);
  try {
    for (const m of messages) await writer.append(m);
  } finally {
    writer.close();
  }
}
