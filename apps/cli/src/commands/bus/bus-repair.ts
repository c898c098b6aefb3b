import { repairBusFile } from '@app/messagebus';
import type { BusRepairOptions } from './bus-flags';
import { resolveReadBus, type ReadIo } from './bus-read';

/**
 * `run-agent bus repair`: reports records lacking their terminator (readers skip them) and removes
 * an unfinished final record under the writers' lock (issue #11).
 */
export async function runBusRepair(opts: BusRepairOptions, io: Omit<ReadIo, 'follow'>): Promise<void> {
  const path = resolveReadBus({ ...opts, tail: '0', follow: false, json: false }, io);
  const r = await repairBusFile(path);
  const lines = [`${path}: ${r.tornRecords} record(s) lacking their terminator (skipped by readers)`];
  if (r.quarantined) lines.push(`quarantined ${r.quarantined.bytes} unreadable byte(s) at the end to ${r.quarantined.file} (left in place; an ERROR message names it)`);
  lines.push(r.removedBytes > 0 ? `removed an unfinished final record (${r.removedBytes} bytes)` : 'no unfinished final record');
  io.stdout.write(`${lines.join('\n')}\n`);
}
