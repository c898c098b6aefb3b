import { readFileSync } from 'node:fs';

/** True while `pid` is a live process: it exists and is neither a zombie awaiting its reaper nor dead (state Z/X in /proc). */
export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}
