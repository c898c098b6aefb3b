import { AppConfig, configFileFor, DEFAULT_API_HOST, DEFAULT_LOG_LEVEL, isLogLevel, LOG_LEVELS, type LogLevel, DEFAULT_API_PORT, loadConfig, loadOrCreateApiKey, resolveApiKeySetting, resolveHostSetting, resolvePortSetting, resolveRunsRoot } from '@app/storage';
import { exposureRefusal, isLoopbackHost, parseAllowedHosts } from '../security/host-check';
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
  /** `--no-auth` as parseArgs names it (bin/launch.js). */
  noAuth?: boolean;
  /** `--no-auth` as commander names it (a negatable `auth`, true by default). */
  auth?: boolean;
  allowedHost?: string[];
  allowAnyHost?: boolean;
  nats?: string;
  logLevel?: string;
}

/** Where the server's key comes from: given (flag, env, config), the generated key file, or none (--no-auth / --insecure-no-auth). */
export type KeySource = 'flag' | 'env' | 'config' | 'file' | 'none';

export interface ResolvedServeOptions {
  root: string;
  config?: AppConfig;
  configPath?: string;
  host: string;
  port: number;
  portExplicit: boolean;
  apiKey?: string;
  keySource: KeySource;
  /** The key file when keySource is `file`, and whether this start created it. */
  keyFile?: { path: string; created: boolean };
  /** Authentication is off, or an opt-out flag was ignored: this warning. */
  authWarning?: string;
  /** `--allowed-host` + $CONDUCTOR_ALLOWED_HOSTS (the server adds config api.allowed_hosts). */
  allowedHosts: string[];
  allowAnyHost: boolean;
  /** --allow-any-host: this warning. */
  hostWarning?: string;
  /** Listening beyond loopback with no API key, allowed by --insecure-no-auth. */
  exposureWarning?: string;
  disableTaskStart: boolean;
  watchdogIntervalMs: number;
  watchdogMaxFailures: number;
  nats?: string;
  natsAuth?: NatsAuth;
  /** The server log's level (flag → CONDUCTOR_LOG_LEVEL → api.log_level → info). */
  logLevel: LogLevel;
}

export const DEFAULT_HOST = DEFAULT_API_HOST;
export const DEFAULT_PORT = DEFAULT_API_PORT;
const TRUTHY = new Set(['1', 'true', 'yes', 'y', 'on']);

export function parsePort(value: string, source: string): number {
  const text = value.trim();
  if (!/^\d+$/.test(text) || Number(text) > 65535) throw new UsageError(`invalid ${source} "${value}": must be a port number between 0 and 65535`);
  return Number(text);
}

function parseLogLevel(value: string, source: string): LogLevel {
  const level = value.trim().toLowerCase();
  if (!isLogLevel(level)) throw new UsageError(`invalid ${source} "${value}": must be one of ${LOG_LEVELS.join(', ')}`);
  return level;
}

function truthy(value: string | undefined): boolean {
  return TRUTHY.has(value?.trim().toLowerCase() ?? '');
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
  const flagLogLevel = flags.logLevel !== undefined ? parseLogLevel(flags.logLevel, '--log-level') : undefined;
  const envLogLevel = flagLogLevel === undefined && env.CONDUCTOR_LOG_LEVEL?.trim() ? parseLogLevel(env.CONDUCTOR_LOG_LEVEL, 'CONDUCTOR_LOG_LEVEL') : undefined;
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
      config = loadConfig(configPath, { strict: false, serverSecrets: true, env });
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }

  const root = resolveRunsRoot({ flag: flags.root, env, config });
  const configLogLevel = config?.api?.log_level ? parseLogLevel(config.api.log_level, 'api.log_level') : undefined;
  const host = resolveHostSetting(flags.host, env, config);
  const port = resolvePortSetting(flagPort, envPort, config);

  const envDisable = env.CONDUCTOR_DISABLE_TASK_START?.trim().toLowerCase();
  const disableTaskStart = envDisable ? TRUTHY.has(envDisable) : !!flags.disableTaskStart;

  const envHosts = (env.CONDUCTOR_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim()).filter((h) => h !== '');
  const allowedHosts = [...envHosts, ...(flags.allowedHost ?? [])];
  const allowAnyHost = !!flags.allowAnyHost || truthy(env.CONDUCTOR_ALLOW_ANY_HOST);
  try {
    parseAllowedHosts(allowedHosts, '--allowed-host / CONDUCTOR_ALLOWED_HOSTS');
    parseAllowedHosts(config?.api?.allowed_hosts ?? [], 'api.allowed_hosts');
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const exposure = exposureRefusal(host, [...(config?.api?.allowed_hosts ?? []), ...allowedHosts], allowAnyHost);
  if (exposure) throw new UsageError(exposure);
  const hostWarning = allowAnyHost ? `no Host check (--allow-any-host): a web page whose name resolves to this server can send it requests` : undefined;

  const auth = resolveServerKey(flags, env, config, host);
  const exposureWarning = checkExposure(host, auth.apiKey, auth.insecure);

  return {
    root,
    config,
    configPath,
    host,
    port,
    portExplicit: flagPort !== undefined || envPort !== undefined,
    apiKey: auth.apiKey,
    keySource: auth.keySource,
    keyFile: auth.keyFile,
    authWarning: auth.warning,
    allowedHosts,
    allowAnyHost,
    hostWarning,
    exposureWarning,
    disableTaskStart,
    watchdogIntervalMs,
    watchdogMaxFailures,
    nats,
    natsAuth,
    logLevel: flagLogLevel ?? envLogLevel ?? configLogLevel ?? DEFAULT_LOG_LEVEL,
  };
}

export { isLoopbackHost };

interface ServerKey {
  apiKey?: string;
  keySource: KeySource;
  keyFile?: { path: string; created: boolean };
  insecure: boolean;
  warning?: string;
}

/**
 * The key rule (issue #29, a token by default): `--api-key` → $CONDUCTOR_API_KEY → config
 * api.api_key (api.auth_enabled) → no key when asked (`--no-auth`/$CONDUCTOR_NO_AUTH on loopback
 * only, `--insecure-no-auth`/$CONDUCTOR_INSECURE_NO_AUTH anywhere) → the generated key of the
 * user's state folder (created 0600 on first start). The opt-outs only decline the generated key:
 * a configured key always applies.
 */
function resolveServerKey(flags: ServeFlags, env: NodeJS.ProcessEnv, config: AppConfig | undefined, host: string): ServerKey {
  const noAuth = !!flags.noAuth || flags.auth === false || truthy(env.CONDUCTOR_NO_AUTH);
  const insecure = !!flags.insecureNoAuth || truthy(env.CONDUCTOR_INSECURE_NO_AUTH);
  const { apiKey } = resolveApiKeySetting(flags.apiKey, env, config);
  if (apiKey) {
    const keySource: KeySource = flags.apiKey?.trim() ? 'flag' : env.CONDUCTOR_API_KEY?.trim() ? 'env' : 'config';
    const ignored = noAuth ? '--no-auth' : insecure ? '--insecure-no-auth' : undefined;
    return { apiKey, keySource, insecure: false, warning: ignored && `${ignored} ignored: an API key is configured (${keySource})` };
  }
  if (noAuth && !insecure) {
    if (!isLoopbackHost(host)) {
      throw new UsageError(`refusing --no-auth on ${host}: it is for loopback binds only (anyone who reaches ${host} could start agents); keep the generated key`);
    }
    return { keySource: 'none', insecure: false, warning: 'authentication is off (--no-auth): every local user and process can start agents as you' };
  }
  if (insecure) {
    const warning = isLoopbackHost(host) ? 'authentication is off (--insecure-no-auth): every local user and process can start agents as you' : undefined;
    return { keySource: 'none', insecure: true, warning };
  }
  let generated: ReturnType<typeof loadOrCreateApiKey>;
  try {
    generated = loadOrCreateApiKey(env);
  } catch (err) {
    throw new UsageError(`${(err as Error).message} (or set --api-key / CONDUCTOR_API_KEY)`);
  }
  return { apiKey: generated.key, keySource: 'file', keyFile: { path: generated.file, created: generated.created }, insecure: false };
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
