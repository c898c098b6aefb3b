import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { AGENT_TOKEN_ENV, type AgentConfig, type AppConfig, type SandboxMode } from '@app/storage';
import { bwrapArgs, SandboxSpawn, toolchainDir } from './bwrap-argv';
import { EgressCredential, EgressDecision, startEgressProxy } from './egress-proxy';
import { checkSandboxCached, systemPerl } from './availability';

/** A sandbox that cannot start: the run fails with this one line and never starts unconfined. */
export class SandboxUnavailableError extends Error {
  constructor(reason: string) {
    super(`sandbox bwrap unavailable: ${reason}; the agent was not started (set sandbox: none to run it unconfined)`);
    this.name = 'SandboxUnavailableError';
  }
}

/**
 * The agent's own `sandbox`, else `defaults.sandbox`, else `none` — then the stricter of that and
 * `projects.<projectId>.sandbox`: a project can require `bwrap` for all its agents, never lift it.
 */
export function sandboxModeFor(config: AppConfig | undefined, agent: Pick<AgentConfig, 'sandbox'> | undefined, projectId?: string): SandboxMode {
  const base = agent?.sandbox ?? config?.defaults?.sandbox ?? 'none';
  const project = projectId !== undefined ? config?.projects?.[projectId]?.sandbox : undefined;
  return project === 'bwrap' ? 'bwrap' : base;
}

export interface SandboxRequest {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  taskDir: string;
  runsRoot: string;
  /** Folder of `run-agent` (its package is exposed read-only). */
  binDir?: string;
  config?: AppConfig;
  /** The run's agent config (its `allow_hosts`, `base_url`, type). */
  agent?: Pick<AgentConfig, 'type' | 'allow_hosts' | 'base_url'>;
}

/** The model provider's API host each agent type may always reach (plus the host of its base_url). */
export const PROVIDER_HOSTS: Record<string, string> = {
  claude: 'api.anthropic.com',
  codex: 'api.openai.com',
  gemini: 'generativelanguage.googleapis.com',
};

/** What the agent's environment carries instead of its API key. */
export const CREDENTIAL_PLACEHOLDER = 'conductor-sandbox-placeholder-key';

/** How each type sends its key, and the variable that points the CLI at another base URL. */
const PROVIDER_AUTH: Record<string, { header: string; prefix?: string; baseUrlVar: string }> = {
  claude: { header: 'x-api-key', baseUrlVar: 'ANTHROPIC_BASE_URL' },
  codex: { header: 'authorization', prefix: 'Bearer ', baseUrlVar: 'OPENAI_BASE_URL' },
  gemini: { header: 'x-goog-api-key', baseUrlVar: 'GOOGLE_GEMINI_BASE_URL' },
};

/**
 * The credential the proxy injects, and the agent env changes (placeholder key, plain-HTTP base
 * URL for an HTTPS provider). Undefined when the agent has no key in its environment.
 */
export function providerCredential(agent: SandboxRequest['agent'], env: Record<string, string>): { credential: EgressCredential; env: Record<string, string> } | undefined {
  const type = agent?.type ?? '';
  const tokenVar = AGENT_TOKEN_ENV[type];
  const auth = PROVIDER_AUTH[type];
  const value = tokenVar ? env[tokenVar] : undefined;
  if (!tokenVar || !auth || !value) return undefined;
  let target: URL;
  try {
    target = new URL(agent?.base_url || `https://${PROVIDER_HOSTS[type]}`);
  } catch {
    return undefined;
  }
  const tls = target.protocol === 'https:';
  const changes: Record<string, string> = { [tokenVar]: CREDENTIAL_PLACEHOLDER };
  if (tls) changes[auth.baseUrlVar] = `http://${target.hostname}${target.pathname === '/' ? '' : target.pathname}`;
  const credential: EgressCredential = {
    host: target.hostname.toLowerCase(),
    port: tls ? 80 : Number(target.port || 80),
    placeholder: CREDENTIAL_PLACEHOLDER,
    value,
    header: auth.header,
    headerPrefix: auth.prefix,
    tls,
    tlsPort: tls ? Number(target.port || 443) : undefined,
  };
  return { credential, env: changes };
}

/** Port of the in-sandbox forwarder (HTTP_PROXY / HTTPS_PROXY point at it). */
export const EGRESS_PORT = 3128;

/** The egress allow-list of one run: the provider host of its type, its base_url host, `sandbox.allow_hosts`, the agent's `allow_hosts`. */
export function egressAllowList(config: AppConfig | undefined, agent: SandboxRequest['agent']): string[] {
  const out = [...(config?.sandbox?.allow_hosts ?? []), ...(agent?.allow_hosts ?? [])];
  const provider = agent?.type ? PROVIDER_HOSTS[agent.type] : undefined;
  if (provider) out.push(provider);
  if (agent?.base_url) {
    try {
      const u = new URL(agent.base_url);
      out.push(u.port ? `${u.hostname}:${u.port}` : u.hostname);
      if (u.protocol === 'https:') out.push(`${u.hostname}:80`); // the agent's plain-HTTP base URL (providerCredential)
    } catch {
      // an invalid base_url allows nothing
    }
  }
  return out;
}

export interface OpenSandbox {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Bytes moved through the egress proxy so far, per `host:port` (both directions). */
  egressBytes(): Record<string, number>;
  /** Stops the egress proxy (after the agent has exited). */
  close(): Promise<void>;
}

/**
 * Starts the run's egress proxy and returns the sandboxed command line and environment (the agent's
 * proxy variables point at the in-sandbox forwarder). Fails closed like sandboxedCommand.
 */
export async function openSandbox(req: SandboxRequest, onDecision: (d: EgressDecision) => void): Promise<OpenSandbox> {
  const check = checkSandboxCached(req.env);
  if (!check.ok) throw new SandboxUnavailableError(check.reason);
  const socketDir = mkdtempSync(join(tmpdir(), 'conductor-egress-'));
  const cred = providerCredential(req.agent, req.env);
  let proxy;
  try {
    proxy = await startEgressProxy({ socketPath: join(socketDir, 'proxy.sock'), allow: egressAllowList(req.config, req.agent), onDecision, credential: cred?.credential });
  } catch (err) {
    rmSync(socketDir, { recursive: true, force: true });
    throw new SandboxUnavailableError(`egress proxy: ${(err as Error).message}`);
  }
  const { args } = sandboxedCommand(req, { socketDir, socketName: 'proxy.sock', port: EGRESS_PORT, node: process.execPath, perl: systemPerl() });
  const env = { ...req.env };
  for (const key of ['NO_PROXY', 'no_proxy', 'ALL_PROXY', 'all_proxy']) delete env[key];
  const url = `http://127.0.0.1:${EGRESS_PORT}`;
  Object.assign(env, { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url }, cred?.env ?? {});
  return {
    command: check.bwrap,
    args,
    env,
    egressBytes: () => ({ ...proxy.bytes }),
    close: async () => {
      await proxy.close();
      rmSync(socketDir, { recursive: true, force: true });
    },
  };
}

/**
 * The command line that runs the agent inside bwrap. Throws SandboxUnavailableError when bwrap is
 * missing or cannot create namespaces here (fail closed).
 */
export function sandboxedCommand(req: SandboxRequest, egress?: SandboxSpawn['egress']): { command: string; args: string[] } {
  const check = checkSandboxCached(req.env);
  if (!check.ok) throw new SandboxUnavailableError(check.reason);
  const cfg = req.config?.sandbox;
  const readPaths = [dirname(process.execPath), toolchainDir(req.command)];
  if (req.binDir) readPaths.push(dirname(req.binDir));
  const spawn: SandboxSpawn = {
    command: req.command,
    args: req.args,
    cwd: req.cwd,
    taskDir: req.taskDir,
    runsRoot: req.runsRoot,
    home: req.env.HOME,
    homeRead: cfg?.home_read,
    homeWrite: cfg?.home_write,
    readPaths,
    maxProcesses: cfg?.max_processes,
    egress,
  };
  return { command: check.bwrap, args: bwrapArgs(spawn) };
}
