import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli as runSharedCli, runCliSync, type CliResult } from '../../utils/cli';

export const repoRoot = join(__dirname, '..', '..', '..');
export const runAgentBin = join(repoRoot, 'bin', 'run-agent');
export const distLibs = join(repoRoot, 'dist', 'apps', 'cli', 'libs');

/** e2e tests run against the built CLI (`npm test` builds first; or `npx nest build cli`). */
export function requireBuild(): void {
  const main = join(repoRoot, 'dist', 'apps', 'cli', 'apps', 'cli', 'src', 'main.js');
  if (!existsSync(main)) throw new Error(`CLI not built: run \`npx nest build cli\` (missing ${main})`);
}

export type { CliResult } from '../../utils/cli';

/** Environment without the caller's JRUN_* / root variables, with HOME pointed at `home`. */
export function cleanEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('JRUN_') && !['CONDUCTOR_ROOT', 'RUN_AGENT_ROOT', 'MESSAGE_BUS', 'CONDUCTOR_CONFIG'].includes(k)) env[k] = v;
  }
  return { ...env, HOME: home, ...extra };
}


export function runCli(args: string[], opts: { env: NodeJS.ProcessEnv; cwd?: string; input?: string }): Omit<CliResult, 'signal'> {
  return runCliSync(args, { ...opts, bin: runAgentBin });
}

export function runCliAsync(args: string[], opts: { env: NodeJS.ProcessEnv; cwd?: string }): Promise<CliResult> {
  return runSharedCli(args, { ...opts, bin: runAgentBin });
}

/** Every path under `dir` with type, size, mtime and content: equal snapshots = nothing changed. */
export function snapshotTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = lstatSync(p);
      if (st.isDirectory()) {
        out[p] = `dir ${st.mtimeMs}`;
        walk(p);
      } else if (st.isSymbolicLink()) {
        out[p] = `link ${st.mtimeMs}`;
      } else {
        out[p] = `file ${st.size} ${st.mtimeMs} ${readFileSync(p, 'base64')}`;
      }
    }
  };
  walk(dir);
  return out;
}
