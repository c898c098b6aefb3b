import { ftruncateSync, readSync } from 'node:fs';
import { ioError } from './errors';
import { EntryScanner } from './parser';
import { alignedWindow } from './reader';

const NL = 0x0a;
const REPAIR_WINDOW = 128 * 1024;

const TAIL_BYTES = 4096;
const FENCE = Buffer.from('---\n');
const MSG_ID_KEY = Buffer.from('msg_id:');

/**
 * True when the file ends inside an entry, i.e. a writer died in the middle of an append: the last
 * line is unterminated, or the last fence line opens a header instead of closing one (an opener
 * follows a blank separator line or the file start and is followed by `msg_id:` or by nothing;
 * a closer is always followed by at least the body's terminating newline). Costs one small pread.
 */
export function endsTorn(fd: number, size: number): boolean {
  if (size === 0) return false;
  const start = Math.max(0, size - TAIL_BYTES);
  const tail = Buffer.alloc(size - start);
  const n = readSync(fd, tail, 0, tail.length, start);
  if (n !== tail.length || tail[tail.length - 1] !== NL) return true;
  let at = tail.length;
  for (;;) {
    at = tail.lastIndexOf(FENCE, at - 1);
    if (at < 0) return false; // inside a long body (or header): its last line is complete
    const lineStart = at === 0 ? start === 0 : tail[at - 1] === NL;
    if (lineStart) break;
    if (at === 0) return false;
  }
  const after = tail.subarray(at + FENCE.length);
  // a header-closing fence is always followed by at least the body's terminating newline
  if (after.length === 0) return true;
  const opener = (start === 0 && at === 0) || (at >= 2 && tail[at - 2] === NL);
  return opener && after.subarray(0, MSG_ID_KEY.length).equals(MSG_ID_KEY);
}

/**
 * Where to cut a torn tail so that the file ends with its last complete record (all-or-nothing for
 * a writer that died mid-append): the separator before the torn record's opening fence, or before
 * a partial fence of a record that never got further. Undefined when the tail cannot be attributed
 * to a record (legacy lines, a window without an entry start): the caller then repairs instead.
 */
export function tornEntryStart(fd: number, size: number, path: string): number | undefined {
  const w = alignedWindow(fd, size, REPAIR_WINDOW, path);
  const scanner = new EntryScanner(w.start === 0 ? 'seek' : 'emitted');
  scanner.push(w.data);
  const state = scanner.currentState;
  const lastNl = w.data.lastIndexOf(NL);
  const partial = w.data.subarray(lastNl + 1).toString('latin1');
  const separatorBefore = (at: number): number => (at > 0 && w.data[at - 1] === NL ? at - 1 : at);
  if (state === 'body' && partial.length > 0 && '---'.startsWith(partial) && lastNl >= 1 && w.data[lastNl - 1] === NL) {
    return w.start + lastNl; // "…body\n" + "\n" + "-": keep the previous record's terminator only
  }
  if ((state === 'header' || state === 'body') && scanner.openerOffset >= 0) {
    return w.start + separatorBefore(scanner.openerOffset);
  }
  return undefined;
}

export interface BusRepairReport {
  /** Records skipped by readers because they lack their terminator. */
  tornRecords: number;
  /** Bytes of an unfinished final record (removed by the next append or by `bus repair`). */
  tornTailBytes: number;
}

/** Scans a whole bus file for records lacking their terminator (what `run-agent bus repair` reports). */
export function inspectBus(fd: number, size: number, path: string): BusRepairReport {
  const w = alignedWindow(fd, size, Number.MAX_SAFE_INTEGER, path);
  const scanner = new EntryScanner('seek');
  scanner.push(w.data);
  let tornTailBytes = 0;
  if (endsTorn(fd, size)) {
    const cut = tornEntryStart(fd, size, path);
    tornTailBytes = cut === undefined ? 0 : size - cut;
  }
  return { tornRecords: scanner.tornRecords, tornTailBytes };
}

function stateAfter(data: Buffer, fromFileStart: boolean, suffix: string): string {
  const scanner = new EntryScanner(fromFileStart ? 'seek' : 'emitted');
  scanner.push(data);
  scanner.push(Buffer.from(suffix));
  return scanner.currentState;
}

/**
 * Bytes to write before the next entry when the file ends in a torn entry, chosen so that readers
 * (ours and upstream's, which share the state machine) are in BODY state when our entry's fence
 * arrives: then that fence closes the torn entry and opens ours, and no later message is lost.
 * A torn body only needs its line ended; a torn header needs a closing fence (two when the
 * partial header is not valid YAML, because a bad header keeps readers in HEADER state).
 */
export function repairPrefix(fd: number, size: number, path: string): string {
  const w = alignedWindow(fd, size, REPAIR_WINDOW, path);
  const fromStart = w.start === 0;
  for (const candidate of ['\n', '\n---\n', '\n---\n---\n']) {
    const state = stateAfter(w.data, fromStart, candidate);
    if (state === 'body' || state === 'emitted' || state === 'seek') return candidate;
  }
  return '\n';
}

/** Cuts the file back to `size` (caller holds the bus lock); returns the new size. */
export function truncateTo(fd: number, size: number, path: string): number {
  try {
    ftruncateSync(fd, size);
  } catch (err) {
    throw ioError('truncate', path, err);
  }
  return size;
}
