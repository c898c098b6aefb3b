import { AppConfig, configFileFor, loadConfig } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { resolveRoot } from '../engine/support/runs-root';

export interface ConfigFlags {
  config?: string;
  root?: string;
}

/** The config in use (--config, $CONDUCTOR_CONFIG, the default lookup) and the runs root; a broken config fails closed. */
export function triggerSettings(flags: ConfigFlags): { config: AppConfig; root: string } {
  const path = configFileFor(flags.config);
  if (!path) throw new UsageError('no config file found: pass --config or set CONDUCTOR_CONFIG (schedules and triggers are defined there)');
  const config = loadConfig(path, { strict: false });
  return { config, root: resolveRoot(flags.root, process.env, flags.config) };
}
