import { spawn } from 'node:child_process';
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { taskRunsDir } from '@app/storage';
import { RunnerError } from '../runner.errors';
import { sleep } from '../sleep';
import { isTaskLoopRunning } from './wake';

export interface TaskLoopSpawn {
  /** The run-agent script (the app knows where it is installed). */
  cli: string;
  /** Absolute runs root. */
  root: string;
  projectId: string;
  taskId: string;
  /** The configured agent name (or type) the task ran with. */
  agent?: string;
  /** Absolute path of the caller's config file: the detached loop must not look for one itself. */
  configPath?: string;
  /** Working directory of the agent (the task's last one). */
  cwd?: string;
}

/** How long a woken loop may take to hold TASK.lock or start a run before the start counts as failed. */
export const LOOP_START_TIMEOUT_MS = 60_000;
const POLL_MS = 50;

function runCount(taskDir: string): number {
  const dir = taskRunsDir(taskDir);
  return existsSync(dir) ? readdirSync(dir).length : 0;
}

/** The last non-empty line of what the loop wrote on stderr (its error). */
function lastLine(fd: number): string {
  const size = fstatSync(fd).size;
  const length = Math.min(size, 8192);
  const buf = Buffer.alloc(length);
  readSync(fd, buf, 0, length, size - length);
  const lines = buf.toString('utf8').split('\n').map((l) => l.trim()).filter(Boolean);
  return (lines.at(-1) ?? '').replace(/^Error:\s*/, '');
}

/**
 * Starts a detached Ralph loop of an existing task (`<cli> task …`, prompt from TASK.md) with the
 * caller's config and runs root (absolute: the loop runs in the task folder, where no config is
 * found), and resolves with its pid only once it runs: it holds TASK.lock or has started a run.
 * A loop that exits before (a config or agent error), or does neither within the timeout, is a
 * failed start: rejects with the loop's own error line. Used when a message wakes a finished task
 * and no loop holds its TASK.lock.
 */
export async function startTaskLoop(opts: TaskLoopSpawn, timeoutMs = LOOP_START_TIMEOUT_MS): Promise<number> {
  const taskDir = join(opts.root, opts.projectId, opts.taskId);
  const args = [opts.cli, 'task', '--root', opts.root, '--project', opts.projectId, '--task', opts.taskId];
  if (opts.configPath) args.push('--config', opts.configPath);
  if (opts.agent) args.push('--agent', opts.agent);
  if (opts.cwd) args.push('--cwd', opts.cwd);
  // the loop's stderr goes to an unlinked temp file: readable here until it has started, then
  // nobody's (the loop never writes to a closed pipe)
  const logPath = join(tmpdir(), `run-agent-wake-${process.pid}-${Date.now()}.log`);
  const log = openSync(logPath, 'w+', 0o600);
  unlinkSync(logPath);
  try {
    const runsBefore = runCount(taskDir);
    const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', 'ignore', log], cwd: taskDir });
    let exit: number | null | undefined;
    child.once('exit', (code, signal) => (exit = code ?? (signal ? 128 : 1)));
    const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
    let failure: Error | undefined;
    void spawnError.then((err) => (failure = err));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (failure) throw new RunnerError('FATAL_AGENT', `could not start a Ralph loop: ${failure.message}`);
      if (isTaskLoopRunning(taskDir) || runCount(taskDir) > runsBefore) break;
      if (exit !== undefined) {
        if (exit === 0) break; // it ran to its end already
        throw new RunnerError('FATAL_AGENT', `the Ralph loop did not start (exit ${exit}): ${lastLine(log) || 'no error message'}`);
      }
      if (Date.now() > deadline) {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
        throw new RunnerError('FATAL_AGENT', `the Ralph loop did not start within ${Math.round(timeoutMs / 1000)}s: ${lastLine(log) || 'no error message'}`);
      }
      await sleep(POLL_MS);
    }
    child.unref();
    return child.pid!;
  } finally {
    closeSync(log);
  }
}
