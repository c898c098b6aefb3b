import { join, resolve } from 'node:path';
import type { AppConfig } from './config.types';
import { expandHome, homeDir } from './paths';

/** `~/.run-agent/runs`: upstream's code default, so existing installs are found. */
export function defaultRunsRoot(env: NodeJS.ProcessEnv = process.env): string {
  return join(homeDir(env), '.run-agent', 'runs');
}

/**
 * D8, the one runs-root rule of every command: `--root` → $CONDUCTOR_ROOT → $RUN_AGENT_ROOT →
 * config `storage.runs_dir` → ~/.run-agent/runs. Always absolute. Never creates anything.
 */
export function resolveRunsRoot(opts: { flag?: string; env?: NodeJS.ProcessEnv; config?: AppConfig; cwd?: string } = {}): string {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const candidates = [opts.flag, env.CONDUCTOR_ROOT, env.RUN_AGENT_ROOT];
  for (const c of candidates) {
    if (c && c.trim() !== '') return resolve(cwd, expandHome(c.trim(), env));
  }
  const fromConfig = opts.config?.storage.runs_dir;
  if (fromConfig && fromConfig.trim() !== '') return resolve(cwd, fromConfig);
  return defaultRunsRoot(env);
}
