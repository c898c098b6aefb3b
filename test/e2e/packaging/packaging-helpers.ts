import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const REPO = join(__dirname, '..', '..', '..');

/** The built CLI that bin/run-agent and bin/conductor run (`npm test` builds first). */
export function assertBuilt(): void {
  const entry = join(REPO, 'dist', 'apps', 'cli', 'apps', 'cli', 'src', 'main.js');
  if (!existsSync(entry)) throw new Error(`not built: ${entry} is missing; run \`npm run build\` first`);
}

/** Environment for spawned commands: a temp HOME and no runs-root/config variables of the caller. */
export function cleanEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(CONDUCTOR_|RUN_AGENT_|JRUN_)/.test(k)) env[k] = v;
  return { ...env, HOME: home, ...extra };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Polls url until it answers 200 (or the child exits / the attempts run out). */
export async function waitForOk(url: string, child?: ChildProcess, attempts = 300): Promise<Response> {
  let last = '';
  for (let i = 0; i < attempts; i++) {
    if (child && child.exitCode !== null) throw new Error(`server exited with ${child.exitCode} before ${url} answered`);
    try {
      const res = await fetch(url);
      if (res.ok) return res;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer 200: ${last}`);
}

export interface Captured {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Spawns a long-running process and keeps its combined output for error messages. */
export function spawnCaptured(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): Captured {
  const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))));
  return { child, output: () => out, exited };
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
