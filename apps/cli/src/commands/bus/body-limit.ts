/**
 * The body limit of `bus post` (issue #12): --max-body-bytes → $CONDUCTOR_MAX_MESSAGE_BODY_BYTES →
 * config storage.max_message_body_bytes (--config, $CONDUCTOR_CONFIG, the default lookup) → MAX_BODY_BYTES (16 MiB). Nest-free; the config file is
 * parsed only when one exists and neither the flag nor the variable is set.
 */
import { configFileFor } from '@app/storage/config/settings';
import { MAX_BODY_BYTES } from '@app/messagebus/types';
import { UsageError } from '../../common/cli-errors';
import type { BusEnv } from './bus-scope';
import type * as Heavy from './bus-scope-heavy';

export const BODY_LIMIT_ENV = 'CONDUCTOR_MAX_MESSAGE_BODY_BYTES';

function parseLimit(value: string, source: string): number {
  if (!/^\s*\d+\s*$/.test(value) || Number(value) <= 0) throw new UsageError(`invalid ${source} "${value}": must be a positive number of bytes`);
  return Number(value.trim());
}

export function resolveBodyLimit(flag: string | undefined, e: BusEnv, configFlag?: string): number {
  if (flag !== undefined) return parseLimit(flag, '--max-body-bytes');
  const fromEnv = e.env[BODY_LIMIT_ENV];
  if (fromEnv !== undefined && fromEnv.trim() !== '') return parseLimit(fromEnv, `$${BODY_LIMIT_ENV}`);
  const configPath = configFileFor(configFlag, e);
  if (configPath) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fromConfig = (require('./bus-scope-heavy') as typeof Heavy).maxBodyFromConfig(configPath, e);
    if (fromConfig > 0) return fromConfig;
  }
  return MAX_BODY_BYTES;
}
