import type { Schedule, ScheduleRun } from '../api/types';
import { formatDuration, parseTime } from './time';

/** "in 4m 10s" / "due" for the next fire time; "—" when the cron never fires again. */
export function nextFireText(s: Pick<Schedule, 'next_fire'>, now: number): string {
  const at = parseTime(s.next_fire);
  if (at === undefined) return '—';
  return at <= now ? 'due' : `in ${formatDuration(at - now)}`;
}

/** What a history entry says in a word or two (docs/triggers.md outcomes). */
const OUTCOME_TEXT: Record<string, string> = {
  claimed: 'claimed',
  started: 'started',
  queued: 'queued',
  waiting: 'waiting for the previous run',
  failed: 'failed',
  skipped_missed: 'skipped (missed while down)',
  skipped_running: 'skipped (previous still running)',
  replaced: 'replaced',
};

export function outcomeText(run: ScheduleRun): string {
  const text = OUTCOME_TEXT[run.outcome] ?? run.outcome;
  return run.error ? `${text}: ${run.error}` : text;
}

/** Newest first, at most `limit` entries. */
export function recentRuns(s: Pick<Schedule, 'history'>, limit = 10): ScheduleRun[] {
  return [...s.history].reverse().slice(0, limit);
}
