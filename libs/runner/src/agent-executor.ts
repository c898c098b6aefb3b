import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { hostname } from 'node:os';
import { watchAgentGroup } from './agent-watchdog';
import { sendSignal } from './process-tree';

export interface AgentLaunch {
  runId: string;
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  stdinPath: string;
  stdoutPath: string;
  stderrPath: string;
  /** The server's agents outlive it on purpose (its planner adopts them after a restart); CLI runners' do not. */
  outliveRunner?: boolean;
}

export interface AgentExit {
  /** Process exit code, or null when a signal ended it. */
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface AgentHandle {
  runId: string;
  hostId: string;
  pid: number;
  pgid: number;
  /** Resolves once the process has exited and its stdio is closed. */
  wait(): Promise<AgentExit>;
  /** Signals the whole process group. */
  signal(signal: NodeJS.Signals): void;
}

/** The seam where an agent process is started: today a local process group, later a worker host. */
export interface AgentExecutor {
  /** Rejects with the spawn error (ENOENT, EACCES, ...) when the process cannot start. */
  start(launch: AgentLaunch): Promise<AgentHandle>;
}

/**
 * Starts the agent in its own session (detached: setsid, so pgid = pid), stdin from prompt.md,
 * stdout/stderr appended straight to the run files as file descriptors.
 */
export class LocalAgentExecutor implements AgentExecutor {
  readonly hostId = hostname();

  start(launch: AgentLaunch): Promise<AgentHandle> {
    const fds: number[] = [];
    try {
      fds.push(openSync(launch.stdinPath, 'r'));
      fds.push(openSync(launch.stdoutPath, 'a', 0o644));
      fds.push(openSync(launch.stderrPath, 'a', 0o644));
    } catch (err) {
      fds.forEach((fd) => closeSync(fd));
      return Promise.reject(err);
    }
    const child = spawn(launch.command, launch.args, {
      cwd: launch.cwd,
      env: launch.env,
      detached: true,
      stdio: [fds[0], fds[1], fds[2]],
    });
    let watchdog: { release(): void } | undefined;
    const exited = new Promise<AgentExit>((resolve) => {
      child.once('close', (code, signal) => {
        watchdog?.release();
        resolve({ code, signal });
      });
    });
    return new Promise<AgentHandle>((resolve, reject) => {
      child.once('error', (err) => {
        fds.forEach((fd) => closeSync(fd));
        reject(err);
      });
      child.once('spawn', () => {
        fds.forEach((fd) => closeSync(fd));
        const pid = child.pid!;
        // the agent's group ends with this runner (a SIGKILLed runner leaves no orphaned agent)
        if (!launch.outliveRunner) watchdog = watchAgentGroup(pid, launch.env);
        resolve({
          runId: launch.runId,
          hostId: this.hostId,
          pid,
          pgid: pid,
          wait: () => exited,
          signal: (sig) => {
            if (!sendSignal(-pid, sig)) sendSignal(pid, sig);
          },
        });
      });
    });
  }
}
