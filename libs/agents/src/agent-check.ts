import { accessSync, closeSync, constants, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { AGENT_TOKEN_ENV, AgentConfig, CLI_AGENT_TYPES, REST_AGENT_TYPES } from '@app/storage';

const VERSION_RE = /v?(\d+\.\d+\.\d+)/;
const VERSION_TIMEOUT_MS = 10_000;

/**
 * `run-agent validate`'s agent checks: the CLI on PATH with its version, the token sources.
 */

/** exec.LookPath: a name with a slash is checked as is, otherwise searched on PATH. */
export function lookPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const isExecutable = (p: string) => {
    try {
      accessSync(p, constants.X_OK);
      return statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (name.includes('/')) return isExecutable(name) ? name : undefined;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir === '' ? '.' : dir, name);
    if (isExecutable(candidate)) return isAbsolute(candidate) ? candidate : join(process.cwd(), candidate);
  }
  return undefined;
}

/** `<cli> --version` (10 s): stdout, else stderr, reduced to its first x.y.z. Through execa, required here (a short-lived tool process). */
async function probeCliVersion(path: string): Promise<string> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const execa = require('execa') as typeof import('execa');
  const r = await execa(path, ['--version'], { timeout: VERSION_TIMEOUT_MS, reject: false, cleanup: false });
  const text = r.stdout.trim() || r.stderr.trim();
  return VERSION_RE.exec(text)?.[1] ?? '';
}

export interface AgentCheck {
  name: string;
  ok: boolean;
  cliStatus: string;
  version: string;
  tokenStatus: string;
}

const isRest = (type: string) => (REST_AGENT_TYPES as readonly string[]).includes(type);
const isCli = (type: string) => (CLI_AGENT_TYPES as readonly string[]).includes(type);

/** Upstream runner.ValidateToken: a config token, or (CLI agents) the type's env var. */
function tokenOk(agent: AgentConfig, env: NodeJS.ProcessEnv): boolean {
  if (agent.type === 'command') return true;
  if (agent.token) return true;
  const envVar = AGENT_TOKEN_ENV[agent.type];
  return isCli(agent.type) && !!envVar && !!env[envVar];
}

function tokenStatus(agent: AgentConfig, ok: boolean, env: NodeJS.ProcessEnv): string {
  if (agent.type === 'command') return 'not required';
  if (isRest(agent.type)) return ok ? 'token set' : 'not set';
  const envVar = AGENT_TOKEN_ENV[agent.type];
  if (ok) {
    if (envVar && env[envVar]) return `${envVar} set`;
    if (agent.token) return 'config token';
    return 'OK';
  }
  return envVar ? `${envVar} not set` : 'not configured';
}

export async function checkAgent(agent: AgentConfig, opts: { skipTokenCheck: boolean; env?: NodeJS.ProcessEnv }): Promise<AgentCheck> {
  const env = opts.env ?? process.env;
  const result: AgentCheck = { name: agent.name, ok: true, cliStatus: '', version: '', tokenStatus: '' };
  const type = agent.type.toLowerCase();
  if (isRest(type)) {
    result.cliStatus = 'REST agent';
  } else if (isCli(type) || type === 'command') {
    const binary = type === 'command' ? (agent.command ?? '') : type;
    const path = binary ? lookPath(binary, env) : undefined;
    if (!path) {
      result.cliStatus = type === 'command' ? `command ${JSON.stringify(binary)} not found` : `CLI ${JSON.stringify(binary)} not found in PATH`;
      result.ok = false;
    } else if (type === 'command') {
      // Arbitrary commands are not run for a version: they may read stdin or have side effects.
      result.cliStatus = 'command found';
    } else {
      result.cliStatus = 'CLI found';
      result.version = await probeCliVersion(path);
    }
  } else {
    result.cliStatus = `unknown type ${JSON.stringify(type)}`;
    result.ok = false;
  }
  if (!opts.skipTokenCheck) {
    const ok = tokenOk({ ...agent, type }, env);
    if (!ok) result.ok = false;
    result.tokenStatus = tokenStatus({ ...agent, type }, ok, env);
  }
  return result;
}

/** `--check-tokens` line: token → OK; token_file → missing/empty/OK; else the env var. */
export function checkTokenSource(agent: AgentConfig, env: NodeJS.ProcessEnv = process.env): { desc: string; ok: boolean } {
  if (agent.token) return { desc: 'token [OK]', ok: true };
  if (agent.token_file) {
    let text: string;
    try {
      text = readFileSync(agent.token_file, 'utf8');
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'ENOENT') return { desc: `token_file ${agent.token_file} [MISSING - file not found]`, ok: false };
      return { desc: `token_file ${agent.token_file} [ERROR - ${e.message}]`, ok: false };
    }
    if (text.trim() === '') return { desc: `token_file ${agent.token_file} [EMPTY]`, ok: false };
    return { desc: `token_file ${agent.token_file} [OK]`, ok: true };
  }
  if (agent.type === 'command') return { desc: 'token [NOT REQUIRED]', ok: true };
  const envVar = AGENT_TOKEN_ENV[agent.type.toLowerCase()];
  if (envVar) return env[envVar] ? { desc: `env ${envVar} [OK]`, ok: true } : { desc: `env ${envVar} [NOT SET]`, ok: false };
  return { desc: 'token [NOT SET]', ok: false };
}

/** Root must exist, be a folder, and accept a file (`.validate-<pid>`, created and removed). */
export function checkRootDir(dir: string): string | undefined {
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (err) {
    return `directory not found: ${(err as Error).message}`;
  }
  if (!isDir) return 'not a directory';
  const probe = join(dir, `.validate-${process.pid}`);
  try {
    closeSync(openSync(probe, 'w', 0o644));
  } catch (err) {
    return `not writable: ${(err as Error).message}`;
  }
  rmSync(probe, { force: true });
  return undefined;
}
