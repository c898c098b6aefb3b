import { Cron } from 'croner';
import type { ScheduleConfig } from '@app/storage';

/** The largest number of slots looked at in one pass (an every-second cron after a day down). */
const MAX_SCAN = 5000;

export function cronOf(s: Pick<ScheduleConfig, 'cron' | 'timezone'>): Cron {
  return new Cron(s.cron, { paused: true, timezone: s.timezone });
}

export function nextSlot(s: Pick<ScheduleConfig, 'cron' | 'timezone'>, after: Date): Date | undefined {
  return cronOf(s).nextRun(after) ?? undefined;
}

/** Slots in (after, until], oldest first (the newest MAX_SCAN when there are more). */
export function slotsBetween(s: Pick<ScheduleConfig, 'cron' | 'timezone'>, after: Date, until: Date): Date[] {
  const cron = cronOf(s);
  const out: Date[] = [];
  let d = cron.nextRun(after);
  while (d && d.getTime() <= until.getTime()) {
    if (out.length === MAX_SCAN) {
      // previousRuns excludes its reference second: start one second later, then cut at `until`
      const latest = cron.previousRuns(MAX_SCAN, new Date(until.getTime() + 1000)).reverse();
      return latest.filter((x) => x.getTime() > after.getTime() && x.getTime() <= until.getTime());
    }
    out.push(d);
    d = cron.nextRun(d);
  }
  return out;
}

export interface SlotPlan {
  /** To fire, oldest first. */
  fire: Date[];
  /** Missed while the server was down and dropped by the missed-run policy. */
  skipped: Date[];
}

/**
 * What to do with the slots due since `lastSlot`: a slot after `upSince` came while the server ran
 * and fires; one at or before it was missed (the server was down) and follows `missed`:
 * `skip` drops them, `run_once` fires the newest, `run_all` the newest `max_missed`.
 */
export function planSlots(s: ScheduleConfig, lastSlot: Date, now: Date, upSince: Date): SlotPlan {
  const due = slotsBetween(s, lastSlot, now);
  const missed = due.filter((d) => d.getTime() <= upSince.getTime());
  const live = due.filter((d) => d.getTime() > upSince.getTime());
  const keep = s.missed === 'skip' ? 0 : s.missed === 'run_once' ? 1 : s.max_missed;
  const kept = keep > 0 ? missed.slice(-keep) : [];
  return { fire: [...kept, ...live], skipped: missed.slice(0, missed.length - kept.length) };
}
