import { readFileSync } from 'node:fs';
import { LivenessProbe, type RunInfo } from '@app/storage';

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

/** A liveness probe that judges a run by its pid alone, a zombie (an agent whose runner died, not yet reaped by init) counting as gone. */
class ZombieAwareProbe extends LivenessProbe {
  override isRunAlive(info: Pick<RunInfo, 'pid' | 'pgid'>): boolean {
    return info.pid > 0 && processAlive(info.pid);
  }
}
export const ZOMBIE_AWARE_PROBE: LivenessProbe = new ZombieAwareProbe();
