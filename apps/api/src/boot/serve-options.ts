import { AppConfig, configFileFor, DEFAULT_API_HOST, DEFAULT_API_PORT, loadConfig, resolveApiKeySetting, resolveHostSetting, resolvePortSetting, resolveRunsRoot } from '@app/storage';
import { parseDurationFlag } from '@app/runner';
import { resolveNatsAuth, validateNatsUrl, type NatsAuth, type NatsAuthFlags } from '@app/scaleout';

/**
 * A wrong flag or setting: one `Error: …` line and exit 2. The code is the lib's input-error code,
 * which the CLI's exitCodeFor (apps/cli/src/common/cli-errors.ts) and serveMain map to exit 2.
 */
export class UsageError extends Error {
  readonly code = 'INVALID_INPUT';
  override readonly name = 'UsageError';
}

/** Flags of `run-agent serve` / `conductor` (cli-storage.md §1.24; declared by the CLI's ServeCommand). */
export interface ServeFlags extends NatsAuthFlags {
  host?: string;
  port?: string;
  root?: string;
  config?: string;
  disableTaskStart?: boolean;
  apiKey?: string;
  watchdogInterval?: string;
  watchdogMaxFailures?: string;
  insecureNoAuth?: boolean;
  nats?: string;
}

export interface ResolvedServeOptions {
  root: string;
  config?: AppConfig;
  configPath?: string;
  host: string;
  port: number;
  portExplicit: boolean;
  apiKey?: string;
  /** auth_enabled without a key: auth stays off, with this warning. */
  authWarning?: string;
  /** Listening beyond loopback with no API key, allowed by --insecure-no-auth. */
  exposureWarning?: string;
  disableTaskStart: boolean;
  watchdogIntervalMs: number;
  watchdogMaxFailures: number;
  nats?: string;
  natsAuth?: NatsAuth;
}

export const DEFAULT_HOST = DEFAULT_API_HOST;
export const DEFAULT_PORT = DEFAULT_API_PORT;
const TRUTHY = new Set(['1', 'true', 'yes', 'y', 'on']);

export function parsePort(value: string, source: string): number {
  const text = value.trim();
  if (!/^\d+$/.test(text) || Number(text) > 65535) throw new UsageError(`invalid ${source} "${value}": must be a port number between 0 and 65535`);
  return Number(text);
}

function parseCount(value: string, flag: string): number {
  if (!/^\d+$/.test(value.trim())) throw new UsageError(`invalid ${flag} "${value}": expected a non-negative integer`);
  return Number(value);
}

/**
 * Precedence: flag → CONDUCTOR_* env → config file → default. The config is loaded leniently (no
 * agents needed); a config that fails to load stops the start with a UsageError (exit 2).
 */
export function resolveServeOptions(flags: ServeFlags, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): ResolvedServeOptions {
  // Validate every flag before touching the disk.
  const flagPort = flags.port !== undefined ? parsePort(flags.port, '--port') : undefined;
  const envPortText = env.CONDUCTOR_PORT?.trim();
  const envPort = flagPort === undefined && envPortText ? parsePort(envPortText, 'CONDUCTOR_PORT') : undefined;
  const watchdogIntervalMs = parseDurationFlag(flags.watchdogInterval ?? '30s', '--watchdog-interval');
  const watchdogMaxFailures = parseCount(flags.watchdogMaxFailures ?? '3', '--watchdog-max-failures');
  const nats = flags.nats?.trim() || undefined;
  let natsAuth: NatsAuth | undefined;
  if (nats !== undefined) {
    try {
      validateNatsUrl(nats);
      natsAuth = resolveNatsAuth(flags, env);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }

  // Fail closed: a config that cannot be read, parsed or validated stops the server (exit 2).
  const configPath = configFileFor(flags.config, { env, cwd });
  let config: AppConfig | undefined;
  if (configPath) {
    try {
      config = loadConfig(configPath, { strict: false, env });
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }

  const root = resolveRunsRoot({ flag: flags.root, env, config });
  const host = resolveHostSetting(flags.host, env, config);
  const port = resolvePortSetting(flagPort, envPort, config);

  const envDisable = env.CONDUCTOR_DISABLE_TASK_START?.trim().toLowerCase();
  const disableTaskStart = envDisable ? TRUTHY.has(envDisable) : !!flags.disableTaskStart;

  const { apiKey, missing } = resolveApiKeySetting(flags.apiKey, env, config);
  const authWarning = missing ? 'api.auth_enabled is set but no API key is configured: authentication is disabled' : undefined;

  const insecure = !!flags.insecureNoAuth || TRUTHY.has(env.CONDUCTOR_INSECURE_NO_AUTH?.trim().toLowerCase() ?? '');
  const exposureWarning = checkExposure(host, apiKey, insecure);

  return {
    root,
    config,
    configPath,
    host,
    port,
    portExplicit: flagPort !== undefined || envPort !== undefined,
    apiKey,
    authWarning,
    exposureWarning,
    disableTaskStart,
    watchdogIntervalMs,
    watchdogMaxFailures,
    nats,
    natsAuth,
  };
}

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * Anyone who reaches the port can start agents: a non-loopback host needs an API key, or the
 * explicit --insecure-no-auth (then a warning). Returns that warning.
 */
export function checkExposure(host: string, apiKey: string | undefined, insecureNoAuth: boolean): string | undefined {
  if (apiKey || isLoopbackHost(host)) return undefined;
  if (!insecureNoAuth) {
    throw new UsageError(
      `refusing to listen on ${host} without an API key: anyone who reaches it could start agents; ` +
        'set --api-key (or CONDUCTOR_API_KEY), or pass --insecure-no-auth to accept that',
    );
  }
  return `listening on ${host} with no API key (--insecure-no-auth): anyone who reaches this port can start agents`;
}

/** The address clients on this host use: loopback for wildcard hosts. */
export function loopbackHost(host: string): string {
  if (host === '0.0.0.0' || host === '' || host === '::' || host === '[::]') return '127.0.0.1';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** The host shown in the Web UI line: localhost for wildcard hosts. */
export function displayHost(host: string): string {
  if (host === '0.0.0.0' || host === '' || host === '::' || host === '[::]') return 'localhost';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
