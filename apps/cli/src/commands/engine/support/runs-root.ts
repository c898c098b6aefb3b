import { loadConfig, resolveRootSetting } from '@app/storage';

/**
 * D8 through the one settings resolver: `--root` → the root of the task an agent runs in
 * ($JRUN_TASK_FOLDER, as `job` and `bus` do, so `run-agent status|output|stop` inside an agent
 * find the runs root it was started with) → CONDUCTOR_ROOT / RUN_AGENT_ROOT → storage.runs_dir of
 * the config in use (--config, $CONDUCTOR_CONFIG or the default lookup) → ~/.run-agent/runs.
 */
export function resolveRoot(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, configFlag?: string): string {
  return resolveRootSetting({ flag, configFlag, env, taskFolder: true, load: (path, e) => loadConfig(path, { strict: false, env: e }) });
}
