import { readSync } from 'node:fs';
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
  const opener = (start === 0 && at === 0) || (at >= 2 && tail[at - 2] === NL);
  return opener && (after.length === 0 || after.subarray(0, MSG_ID_KEY.length).equals(MSG_ID_KEY));
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
