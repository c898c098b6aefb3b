import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RunInfo, writeRunInfo, ZERO_TIME } from '@app/storage';

/** Writes a run folder with run-info.yaml and stdout/stderr files; returns the run dir. */
export function seedRun(root: string, p: string, t: string, runId: string, over: Partial<RunInfo> = {}, stdout = ''): string {
  const dir = path.join(root, p, t, 'runs', runId);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'agent-stdout.txt'), stdout);
  fs.writeFileSync(path.join(dir, 'agent-stderr.txt'), '');
  fs.writeFileSync(path.join(dir, 'prompt.md'), 'do it\n');
  const info: RunInfo = {
    version: 1,
    run_id: runId,
    project_id: p,
    task_id: t,
    agent: 'fake',
    process_ownership: 'managed',
    pid: 0,
    pgid: 0,
    start_time: new Date('2026-01-01T12:00:00Z'),
    end_time: new Date('2026-01-01T12:01:00Z'),
    exit_code: 0,
    status: 'completed',
    cwd: '/tmp',
    prompt_path: path.join(dir, 'prompt.md'),
    output_path: path.join(dir, 'output.md'),
    stdout_path: path.join(dir, 'agent-stdout.txt'),
    stderr_path: path.join(dir, 'agent-stderr.txt'),
    commandline: 'fake-command-agent',
    agent_version: '',
    ...over,
  };
  writeRunInfo(path.join(dir, 'run-info.yaml'), info);
  return dir;
}

/** A live process group (sleep) to stand for a running agent. */
export function spawnSleeper(seconds = 60): ChildProcess {
  const child = spawn('sleep', [String(seconds)], { detached: true, stdio: 'ignore' });
  child.unref();
  return child;
}

export function runningFields(child: ChildProcess): Partial<RunInfo> {
  return { pid: child.pid!, pgid: child.pid!, status: 'running', exit_code: -1, end_time: ZERO_TIME, start_time: new Date() };
}

export function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
}
