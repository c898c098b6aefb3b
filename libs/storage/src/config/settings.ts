/**
 * The one settings resolver of CLI and API: flags → environment → config file → defaults (D8).
 * Nest-free and free of the YAML parser, so the `bus post` fast path may import it deeply
 * (`@app/storage/config/settings`); loading the config is the caller's `load` function.
 */
import { dirname, resolve } from 'node:path';
import type { AppConfig } from './config.types';
import { API_DEFAULTS } from './config.types';
import { findConfigFile } from './paths';
import { resolveRunsRoot } from './runs-root';

export const DEFAULT_API_HOST: string = API_DEFAULTS.host;
export const DEFAULT_API_PORT: number = API_DEFAULTS.port;
/** Default of the CLI's `--server`: the API on this host at the default port. */
export const DEFAULT_SERVER_URL = `http://localhost:${DEFAULT_API_PORT}`;

export interface SettingsIo {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

function text(value: string | undefined): string | undefined {
  const t = value?.trim();
  return t ? t : undefined;
}

/** The config file in use: `--config` → $CONDUCTOR_CONFIG → ./config.yaml, ./config.yml, ~/.run-agent/conductor-loop.hcl. */
export function configFileFor(flag: string | undefined, io: SettingsIo = {}): string | undefined {
  const env = io.env ?? process.env;
  return text(flag) ?? text(env.CONDUCTOR_CONFIG) ?? findConfigFile(io.cwd ?? process.cwd(), env);
}

/** The runs root of the task an agent runs in (`<root>/<project>/<task>` in $JRUN_TASK_FOLDER). */
export function taskFolderRoot(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const folder = text(env.JRUN_TASK_FOLDER);
  return folder ? dirname(dirname(resolve(folder))) : undefined;
}

/** The runs root when a flag or variable decides it (`--root`, $CONDUCTOR_ROOT, $RUN_AGENT_ROOT), else undefined. */
export function explicitRunsRoot(flag: string | undefined, io: SettingsIo = {}): string | undefined {
  const env = io.env ?? process.env;
  if (!text(flag) && !text(env.CONDUCTOR_ROOT) && !text(env.RUN_AGENT_ROOT)) return undefined;
  return resolveRunsRoot({ flag: text(flag), env, cwd: io.cwd });
}

export interface RootSettingOptions extends SettingsIo {
  /** `--root`. */
  flag?: string;
  /** `--config`. */
  configFlag?: string;
  /** Whether the root of $JRUN_TASK_FOLDER comes before the environment (every run command: yes). */
  taskFolder?: boolean;
  /** Reads the config file (lenient); only called when no flag or variable decides. */
  load: (path: string, env: NodeJS.ProcessEnv) => AppConfig;
}

/**
 * D8, the runs root of every command: `--root` → the root of $JRUN_TASK_FOLDER (when asked) →
 * $CONDUCTOR_ROOT → $RUN_AGENT_ROOT → `storage.runs_dir` of the config in use → ~/.run-agent/runs.
 * The config is read only when nothing before it decides, so a broken ./config.yaml does not break
 * a command that names its root.
 */
export function resolveRootSetting(opts: RootSettingOptions): string {
  const env = opts.env ?? process.env;
  if (!text(opts.flag) && opts.taskFolder) {
    const fromTask = taskFolderRoot(env);
    if (fromTask) return fromTask;
  }
  const explicit = explicitRunsRoot(opts.flag, opts);
  if (explicit) return explicit;
  const configPath = configFileFor(opts.configFlag, opts);
  if (!configPath) return resolveRunsRoot({ env, cwd: opts.cwd });
  let config: AppConfig;
  try {
    config = opts.load(configPath, env);
  } catch (err) {
    // Fail closed, keeping the code (INVALID_CONFIG → exit 2): never the default root in place of a broken file.
    const code = (err as { code?: unknown } | null)?.code;
    throw Object.assign(new Error(`resolve runs dir: ${err instanceof Error ? err.message : String(err)}`), typeof code === 'string' ? { code } : {});
  }
  return resolveRunsRoot({ env, cwd: opts.cwd, config });
}

/** The API port rule: flag → $CONDUCTOR_PORT → config api.port (when > 0) → 14355. Values are parsed by the caller. */
export function resolvePortSetting(flag: number | undefined, envPort: number | undefined, config?: AppConfig): number {
  const configPort = typeof config?.api?.port === 'number' && config.api.port > 0 ? config.api.port : undefined;
  return flag ?? envPort ?? configPort ?? DEFAULT_API_PORT;
}

/** The API host rule: flag → $CONDUCTOR_HOST → config api.host → 127.0.0.1. */
export function resolveHostSetting(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, config?: AppConfig): string {
  return text(flag) ?? text(env.CONDUCTOR_HOST) ?? text(config?.api?.host) ?? DEFAULT_API_HOST;
}

/** The API key rule: flag → $CONDUCTOR_API_KEY → config api.api_key when api.auth_enabled. `missing` when auth is on without a key. */
export function resolveApiKeySetting(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, config?: AppConfig): { apiKey?: string; missing: boolean } {
  const given = text(flag) ?? text(env.CONDUCTOR_API_KEY);
  if (given) return { apiKey: given, missing: false };
  const api = (config?.api ?? {}) as { auth_enabled?: boolean; api_key?: string };
  if (!api.auth_enabled) return { missing: false };
  const fromConfig = text(api.api_key);
  return fromConfig ? { apiKey: fromConfig, missing: false } : { missing: true };
}

/** `localhost`, 127.0.0.0/8 or ::1 (brackets allowed): an address only this machine reaches. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}
