import type { ScheduleConfig } from '@app/storage';
import { nextSlot } from './slots';
import type { ScheduleView } from '@app/contracts';
import { readScheduleRecord } from './state';

export type { ScheduleView };

/** The schedules with their next fire time and history, from the config and the records (no server needed). */
export function listSchedules(root: string, schedules: Record<string, ScheduleConfig>, now = new Date()): ScheduleView[] {
  return Object.values(schedules).map((s) => {
    const view: ScheduleView = {
      name: s.name,
      cron: s.cron,
      timezone: s.timezone,
      missed: s.missed,
      max_missed: s.max_missed,
      concurrency: s.concurrency,
      project_id: s.task.project_id,
      next_fire: nextSlot(s, now)?.toISOString(),
      history: [],
    };
    try {
      const rec = readScheduleRecord(root, s.name);
      if (rec) {
        view.last_slot = rec.last_slot;
        view.history = rec.history;
      }
    } catch (err) {
      view.error = (err as Error).message;
    }
    return view;
  });
}
