import { resolve } from 'node:path';
import { discoverBus } from '@app/messagebus/discover';
import { BUS_FILE_NAMES } from '@app/messagebus/types';
import type { BusDiscoverOptions } from './bus-flags';

/** `run-agent bus discover`: prints the nearest bus file walking up from --from (default: cwd). */
export function runBusDiscover(opts: BusDiscoverOptions, io: { cwd: string; stdout: { write(s: string): unknown } }): void {
  const start = resolve(io.cwd, opts.from?.trim() || '.');
  const found = discoverBus(start);
  if (!found) throw new Error(`no message bus file found from "${start}" (searched for ${BUS_FILE_NAMES.join(', ')})`);
  io.stdout.write(`${found}\n`);
}
