import { existsSync, realpathSync } from 'node:fs';
import { dirname, relative, isAbsolute } from 'node:path';
import { EGRESS_FORWARDER_FD_JS, EGRESS_FORWARDER_JS, EGRESS_LAUNCHER_PL } from './egress-proxy';

/** What a sandboxed agent run needs: the process to start and the folders it may see. */
export interface SandboxSpawn {
  command: string;
  args: string[];
  cwd: string;
  /** The agent's task folder (bus, runs): writable; every other task stays hidden. */
  taskDir: string;
  /** The runs root: hidden except `taskDir`. */
  runsRoot: string;
  /** The user's home: hidden (tmpfs) except `homeRead` / `homeWrite`. */
  home?: string;
  homeRead?: string[];
  homeWrite?: string[];
  /** Toolchain folders re-exposed read-only after the home is hidden (node, run-agent, the agent CLI). */
  readPaths?: string[];
  /** RLIMIT_NPROC inside (0/undefined = not set). */
  maxProcesses?: number;
  /**
   * The egress proxy: its unix socket's host folder (bound at EGRESS_SOCKET_DIR) and what runs the
   * in-sandbox forwarder: `node`, and `perl` for the fast start (absent: the agent waits for node).
   */
  egress?: { socketDir: string; socketName: string; port: number; node: string; perl?: string };
}

/** Where the proxy's socket folder appears inside the sandbox. */
export const EGRESS_SOCKET_DIR = '/tmp/.conductor-egress';

function inside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** The real folder of an executable (symlinked npm bins live next to their package). */
export function toolchainDir(path: string): string {
  try {
    return dirname(realpathSync(path));
  } catch {
    return dirname(path);
  }
}

/**
 * The bwrap argument list (after the bwrap binary) that runs `spawn.command` confined: a
 * read-only view of `/`, private /dev, /proc and /tmp, the home and the runs root hidden behind
 * tmpfs mounts with the listed exceptions, the task folder and the working tree writable, no
 * network, new pid/ipc/uts namespaces, a new session, dying with the runner's process.
 * Later mounts overlay earlier ones, so the order below is the policy.
 */
export function bwrapArgs(spawn: SandboxSpawn): string[] {
  const a: string[] = ['--die-with-parent', '--new-session', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-net', '--unshare-cgroup-try'];
  a.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp');
  const home = spawn.home && spawn.home !== '/' ? spawn.home : undefined;
  if (home) {
    a.push('--tmpfs', home);
    for (const p of spawn.homeRead ?? []) if (existsSync(p)) a.push('--ro-bind', p, p);
    for (const p of spawn.homeWrite ?? []) if (existsSync(p)) a.push('--bind', p, p);
  }
  for (const p of spawn.readPaths ?? []) {
    if (existsSync(p) && !inside(p, spawn.runsRoot)) a.push('--ro-bind', p, p);
  }
  a.push('--tmpfs', spawn.runsRoot);
  a.push('--bind', spawn.taskDir, spawn.taskDir);
  if (!inside(spawn.cwd, spawn.taskDir)) a.push('--bind', spawn.cwd, spawn.cwd);
  if (spawn.egress) a.push('--bind', spawn.egress.socketDir, EGRESS_SOCKET_DIR);
  a.push('--chdir', spawn.cwd, '--');
  const limit = spawn.maxProcesses && spawn.maxProcesses > 0 ? `ulimit -u ${Math.floor(spawn.maxProcesses)} || exit 125; ` : '';
  if (!spawn.egress) {
    a.push('/bin/sh', '-c', `${limit}exec "$@"`, 'sh', spawn.command, ...spawn.args);
    return a;
  }
  const e = spawn.egress;
  const sock = `${EGRESS_SOCKET_DIR}/${e.socketName}`;
  if (e.perl) {
    // fast start: perl binds the forwarder's port, starts node on it and execs the agent without waiting
    const launch = [e.perl, '-e', EGRESS_LAUNCHER_PL, '--', String(e.port), e.node, EGRESS_FORWARDER_FD_JS, sock, spawn.command, ...spawn.args];
    if (limit) a.push('/bin/sh', '-c', `${limit}exec "$@"`, 'sh');
    a.push(...launch);
    return a;
  }
  // slow start: the forwarder runs beside the agent in the pid namespace (it dies with it); the agent waits until it listens
  const script =
    `${limit}f=/tmp/.conductor-egress-ready; mkfifo "$f" || exit 125; "$1" -e "$2" "$3" "$4" "$f" </dev/null & ` +
    `read r < "$f"; [ "$r" = ok ] || { echo "sandbox: egress forwarder failed: $r" >&2; exit 125; }; shift 4; exec "$@"`;
  a.push('/bin/sh', '-c', script, 'sh', e.node, EGRESS_FORWARDER_JS, String(e.port), sock, spawn.command, ...spawn.args);
  return a;
}
