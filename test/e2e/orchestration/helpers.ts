import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { BusWriter, type NewMessage } from '@app/messagebus';
import { writeRunInfo, ZERO_TIME, type RunInfo } from '@app/storage';
import { fakeAgentsBinDir } from '../../utils/fake-agents';

export const REPO = resolve(__dirname, '..', '..', '..');
export const RUN_AGENT = join(REPO, 'bin', 'run-agent');
export const PROJECT = 'proj';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A temp dir with a runs root and a HOME, so nothing touches ~/.run-agent; fake agents on PATH. */
export class Sandbox {
  readonly dir = mkdtempSync(join(tmpdir(), 'ra-orch-'));
  readonly root = join(this.dir, 'runs');
  readonly home = join(this.dir, 'home');

  constructor() {
    mkdirSync(this.root, { recursive: true });
    mkdirSync(this.home, { recursive: true });
  }

  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) {
      if (!/^(JRUN_|FAKE_AGENT_|CONDUCTOR_|RUN_AGENT_ROOT$|MESSAGE_BUS$|TASK_FOLDER$|RUN_FOLDER$|ANTHROPIC_|OPENAI_|GEMINI_)/.test(k)) env[k] = v;
    }
    const path = [fakeAgentsBinDir(), join(REPO, 'bin'), ...(process.env.PATH ?? '').split(delimiter)].join(delimiter);
    return { ...env, HOME: this.home, PATH: path, ...extra };
  }

  run(args: string[], opts: { env?: Record<string, string>; cwd?: string; input?: string } = {}): Promise<CliResult> {
    return new Promise((done, fail) => {
      const child = spawn(process.execPath, [RUN_AGENT, ...args], {
        cwd: opts.cwd ?? this.dir,
        env: this.env(opts.env),
        stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', fail);
      child.on('close', (code) => done({ code, stdout, stderr }));
      if (opts.input !== undefined) child.stdin!.end(opts.input);
    });
  }

  async post(busPath: string, msg: Partial<NewMessage> & { type: string; body: string }): Promise<string> {
    const writer = new BusWriter(busPath);
    const written = await writer.append({ project_id: PROJECT, task_id: '', run_id: '', ...msg });
    writer.close();
    return written.msg_id;
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export function runInfoOf(project: string, task: string, runId: string, over: Partial<RunInfo> = {}): RunInfo {
  return {
    version: 1,
    run_id: runId,
    project_id: project,
    task_id: task,
    agent: 'codex',
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
  writeRunInfo(join(dir, 'run-info.yaml'), runInfoOf(project, task, runId, over));
  return dir;
}

/** A live process in its own process group (a stand-in for a running agent). */
export function liveGroupLeader(): ChildProcess {
  const child = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
  child.unref();
  return child;
}

export function runningInfo(pid: number, startedMsAgo = 60_000): Partial<RunInfo> {
  return { pid, pgid: pid, status: 'running', exit_code: -1, end_time: ZERO_TIME, start_time: new Date(Date.now() - startedMsAgo) };
}
