import { dirname, resolve } from 'node:path';
import { findConfigFile, loadConfig, resolveRunsRoot } from '@app/storage';

/**
 * D8: `--root` → the root of the task an agent runs in ($JRUN_TASK_FOLDER, as `job` and `bus`
 * do, so `run-agent status|output|stop` inside an agent find the runs root it was started
 * with) → CONDUCTOR_ROOT / RUN_AGENT_ROOT → storage.runs_dir of the config in use →
 * ~/.run-agent/runs. The config is --config, $CONDUCTOR_CONFIG or the default lookup; it is only read when no flag or env var decides, so a broken
 * ./config.yaml does not break commands that name their root.
 */
export function resolveRoot(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, configFlag?: string): string {
  const taskFolder = env.JRUN_TASK_FOLDER?.trim();
  if (!flag?.trim() && taskFolder) return dirname(dirname(resolve(taskFolder)));
  if (flag?.trim() || env.CONDUCTOR_ROOT?.trim() || env.RUN_AGENT_ROOT?.trim()) {
    return resolveRunsRoot({ flag: flag?.trim() || undefined, env });
  }
  const configPath = configFlag?.trim() || env.CONDUCTOR_CONFIG?.trim() || findConfigFile(process.cwd(), env);
  if (!configPath) return resolveRunsRoot({ env });
  try {
    return resolveRunsRoot({ env, config: loadConfig(configPath, { strict: false, env }) });
  } catch (err) {
    throw new Error(`resolve runs dir: ${err instanceof Error ? err.message : String(err)}`);
  }
}
