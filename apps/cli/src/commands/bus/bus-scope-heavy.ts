/**
 * The parts of bus scope resolution that parse YAML (config files, run-info.yaml). Loaded on
 * demand by bus-scope.ts so that the fast path of `bus post` does not pay for the YAML parser.
 */
import { findConfigFile, loadConfig } from '@app/storage/config/load-config';
import { resolveRunsRoot } from '@app/storage/config/runs-root';
import { isProjectHome as projectHome, scopeFromRunInfoUpwards } from '@app/storage/scope';
import type { BusEnv, Scope } from './bus-scope';

export function rootFromConfig(e: BusEnv): string {
  const path = e.env.CONDUCTOR_CONFIG?.trim() || findConfigFile(e.cwd, e.env);
  if (!path) return resolveRunsRoot({ env: e.env, cwd: e.cwd });
  try {
    return resolveRunsRoot({ env: e.env, cwd: e.cwd, config: loadConfig(path, { strict: false, env: e.env }) });
  } catch (err) {
    throw new Error(`resolve runs dir: ${err instanceof Error ? err.message : String(err)}`);
  }
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
