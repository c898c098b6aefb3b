import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../../utils/wait';

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

/** Waits until url answers 200 (fails early when `child` exits) and returns that response. */
export function waitForOk(url: string, child?: ChildProcess, headers: Record<string, string> = {}): Promise<Response> {
  return waitFor(`${url} to answer 200`, async () => {
    if (child && child.exitCode !== null) throw new Error(`server exited with ${child.exitCode} before ${url} answered`);
    const res = await fetch(url, { headers });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    return res;
  });
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
