import { BusWriter, type BusWriterOptions } from './writer';

/**
 * Opens a writer for one bus file: the seam a part takes to write a bus (issue #32), handed down
 * like the executor. Only @app/messagebus constructs BusWriter (test/arch/seams.spec.ts).
 */
export type BusWriters = (path: string, overrides?: BusWriterOptions) => BusWriter;

/** The factory with the app's settings (config: message body limit, lock timeout) as defaults. */
export function createBusWriters(defaults: BusWriterOptions = {}): BusWriters {
  return (path, overrides = {}) => new BusWriter(path, { ...defaults, ...overrides });
}
