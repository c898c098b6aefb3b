import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { hostname } from 'node:os';
import { AgentError, findExecutable } from '@app/agents';
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
  /**
   * Lets the agent begin: until then it waits at a gate before `exec` (LocalAgentExecutor), so it
   * runs only once the runner has recorded it. A runner that dies first closes the gate's pipe and
   * the process exits without ever starting the agent. Absent: the agent runs from the start.
   */
  release?(): void;
}

/** The seam where an agent process is started: today a local process group, later a worker host. */
export interface AgentExecutor {
  /** Rejects with the spawn error (ENOENT, EACCES, ...) when the process cannot start. */
  start(launch: AgentLaunch): Promise<AgentHandle>;
}

/**
 * The gate the agent waits at (issue #31): `sh` blocks reading fd 3, a pipe whose other end only
 * the runner holds. A line from the runner (release) → `exec` of the agent, in the same process
 * (same pid and group, fd 3 closed first); end of file, because the runner died before recording
 * the agent → exit 125 without running it. A dead runner never leaves an unrecorded agent.
 */
const GATE = 'read _ <&3 || exit 125; exec 3<&-; exec "$0" "$@"';

/** The argv that starts `command args` behind the gate (fd 3 must be a pipe the runner holds). */
export function gatedArgv(command: string, args: string[]): { command: string; args: string[] } {
  return { command: '/bin/sh', args: ['-c', GATE, command, ...args] };
}

/**
 * Starts the agent in its own session (detached: setsid, so pgid = pid), stdin from prompt.md,
 * stdout/stderr appended straight to the run files as file descriptors, behind the gate above.
 */
export class LocalAgentExecutor implements AgentExecutor {
  readonly hostId = hostname();

  start(launch: AgentLaunch): Promise<AgentHandle> {
    const fds: number[] = [];
    try {
      checkRunnable(launch.command, launch.cwd, launch.env);
      fds.push(openSync(launch.stdinPath, 'r'));
      fds.push(openSync(launch.stdoutPath, 'a', 0o644));
      fds.push(openSync(launch.stderrPath, 'a', 0o644));
    } catch (err) {
      fds.forEach((fd) => closeSync(fd));
      return Promise.reject(err);
    }
    const gated = gatedArgv(launch.command, launch.args);
    const child = spawn(gated.command, gated.args, {
      cwd: launch.cwd,
      env: launch.env,
      detached: true,
      stdio: [fds[0], fds[1], fds[2], 'pipe'],
    });
    const gate = child.stdio[3] as import('node:net').Socket;
    gate.on('error', () => undefined); // the process ended before its release: nothing to let go
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
          release: () => gate.end('go\n'),
        });
      });
    });
  }
}

/**
 * What spawn would refuse, refused before the gate (whose `sh` always starts): a command that is
 * not found is ENOENT, one that is not an executable file EACCES, as the spawn errors were.
 */
function checkRunnable(command: string, cwd: string, env: Record<string, string>): void {
  try {
    findExecutable(command, env, cwd);
  } catch (err) {
    if (!(err instanceof AgentError)) throw err;
    const code = err.code === 'NOT_EXECUTABLE' ? 'EACCES' : 'ENOENT';
    throw Object.assign(new Error(`spawn ${command} ${code}`), { code, errno: code === 'EACCES' ? -13 : -2, syscall: `spawn ${command}`, path: command });
  }
}
