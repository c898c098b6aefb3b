/**
 * The parts of bus scope resolution that parse YAML (config files, run-info.yaml). Loaded on
 * demand by bus-scope.ts so that the fast path of `bus post` does not pay for the YAML parser.
 */
import { loadConfig } from '@app/storage/config/load-config';
import { resolveRootSetting } from '@app/storage/config/settings';
import { isProjectHome as projectHome, scopeFromRunInfoUpwards } from '@app/storage/scope';
import type { BusEnv, Scope } from './bus-scope';

export function rootFromConfig(e: BusEnv): string {
  return resolveRootSetting({ env: e.env, cwd: e.cwd, load: (path, env) => loadConfig(path, { strict: false, env }) });
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
    throw new Error(`read body limit: ${err instanceof Error ? err.message : String(err)}`);
  }
}
