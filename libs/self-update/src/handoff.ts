import { spawn } from 'node:child_process';
import * as http from 'node:http';
import * as path from 'node:path';

export interface HandoffPlan {
  /** bin/conductor or bin/run-agent of the new package. */
  bin: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Where the new server must answer GET /api/v1/health. */
  healthUrl: string;
  timeoutMs: number;
}

/**
 * The command line the new server gets: the same arguments and environment as this process, with
 * the port pinned to the one we listen on (a `--port 0` or a port fallback would otherwise move it).
 */
export function handoffArgs(argv: string[], env: NodeJS.ProcessEnv, port: number): { args: string[]; env: NodeJS.ProcessEnv } {
  const args = [...argv];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--port' && i + 1 < args.length) args[i + 1] = String(port);
    else if (args[i].startsWith('--port=')) args[i] = `--port=${port}`;
  }
  return { args, env: { ...env, CONDUCTOR_PORT: String(port) } };
}

/** `bin/run-agent` when this server was started as run-agent, else `bin/conductor`. */
export function handoffBin(root: string, scriptPath = process.argv[1] ?? ''): string {
  return path.join(root, 'bin', path.basename(scriptPath) === 'run-agent' ? 'run-agent' : 'conductor');
}

function probe(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

export interface StartedServer {
  pid: number;
  /** Ends the new server's process group (used when it did not come up healthy). */
  kill(): void;
}

/**
 * Starts the new server detached (its own process group, outliving us) and waits until it answers
 * its health check; rejects if it exits first or stays unhealthy past the timeout.
 */
export async function startNewServer(plan: HandoffPlan): Promise<StartedServer> {
  const child = spawn(process.execPath, [plan.bin, ...plan.args], { cwd: plan.cwd, env: plan.env, detached: true, stdio: ['ignore', 'inherit', 'inherit'] });
  const pid = child.pid;
  let exited: string | undefined;
  let spawnError: Error | undefined;
  child.on('error', (err) => (spawnError = err));
  child.on('exit', (code, signal) => (exited = signal ? `signal ${signal}` : `exit code ${code}`));
  const kill = () => {
    if (pid === undefined || exited) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  const deadline = Date.now() + plan.timeoutMs;
  for (;;) {
    if (spawnError) throw new Error(`cannot start ${plan.bin}: ${spawnError.message}`);
    if (exited) throw new Error(`the new server exited (${exited}) before answering ${plan.healthUrl}`);
    if (await probe(plan.healthUrl)) break;
    if (Date.now() > deadline) {
      kill();
      throw new Error(`the new server did not answer ${plan.healthUrl} within ${plan.timeoutMs / 1000}s`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  child.unref();
  return { pid: pid!, kill };
}
