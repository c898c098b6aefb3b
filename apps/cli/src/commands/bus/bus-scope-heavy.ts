/**
 * The parts of bus scope resolution that parse YAML (config files, run-info.yaml). Loaded on
 * demand by bus-scope.ts so that the fast path of `bus post` does not pay for the YAML parser.
 */
import { loadConfig } from '@app/storage/config/load-config';
import { isProjectHome as projectHome, scopeFromRunInfoUpwards } from '@app/storage/scope';
import type { AppConfig } from '@app/storage/config/config.types';
import type { BusEnv, Scope } from './bus-scope';

/** The lenient config load every command uses to find its runs root. */
export function loadConfigLenient(path: string, env: NodeJS.ProcessEnv): AppConfig {
  return loadConfig(path, { strict: false, env });
}

export function scopeFromRunInfo(cwd: string): Scope {
  return scopeFromRunInfoUpwards(cwd) ?? {};
}

export function isProjectHome(cwd: string): boolean {
  return projectHome(cwd);
}

/** config storage.max_message_body_bytes of the config file at `path` (0 when unset). */
export function maxBodyFromConfig(path: string, e: BusEnv): number {
  try {
    return loadConfig(path, { strict: false, env: e.env }).storage.max_message_body_bytes;
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    throw Object.assign(new Error(`read body limit: ${err instanceof Error ? err.message : String(err)}`), typeof code === 'string' ? { code } : {});
  }
}
