import { spawn } from 'node:child_process';

/** Seconds between SIGTERM and SIGKILL for an orphaned agent group (RUN_AGENT_ORPHAN_GRACE_SECONDS). */
export const DEFAULT_ORPHAN_GRACE_SECONDS = 10;

// $1 = agent pgid, $2 = grace seconds. A line on stdin = the runner released the agent normally;
// EOF without a line = the runner is gone (the kernel closed the pipe): end the agent's group.
const SCRIPT =
  'read -r line && exit 0; kill -TERM "-$1" 2>/dev/null || exit 0; i=0; ' +
  'while [ "$i" -lt "$2" ] && kill -0 "-$1" 2>/dev/null; do sleep 1; i=$((i+1)); done; kill -KILL "-$1" 2>/dev/null; exit 0';

export interface AgentWatchdog {
  /** The watchdog's pid (undefined when none was started). */
  pid?: number;
  /** The agent ended under our control: the watchdog exits without signalling. */
  release(): void;
}

function graceSeconds(env: NodeJS.ProcessEnv): number {
  const raw = Number.parseInt(env.RUN_AGENT_ORPHAN_GRACE_SECONDS ?? '', 10);
  return Number.isFinite(raw) && raw >= 0 && raw <= 3600 ? raw : DEFAULT_ORPHAN_GRACE_SECONDS;
}

/**
 * Makes an agent's process group end when its runner dies (issue #11, docs/decisions.md): a tiny
 * `/bin/sh` in its own session blocks reading a pipe whose only writer is this process. A runner
 * killed with SIGKILL cannot clean up, but the kernel closes the pipe, so the watchdog wakes at
 * once and sends SIGTERM, then SIGKILL after the grace, to the agent's group. No polling, no
 * native code; it also covers the agent's own children, which PR_SET_PDEATHSIG would not.
 */
export function watchAgentGroup(pgid: number, env: NodeJS.ProcessEnv = process.env): AgentWatchdog {
  if (process.platform === 'win32' || !(pgid > 1)) return { release: () => undefined };
  const child = spawn('/bin/sh', ['-c', SCRIPT, 'run-agent-watchdog', String(pgid), String(graceSeconds(env))], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  child.on('error', () => undefined);
  const stdin = child.stdin!;
  stdin.on('error', () => undefined);
  child.unref();
  (stdin as unknown as { unref?(): void }).unref?.();
  let released = false;
  return {
    pid: child.pid,
    release: () => {
      if (released) return;
      released = true;
      stdin.end('released\n');
    },
  };
}
