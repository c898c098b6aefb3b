/** One run of a schedule (GET /api/v1/schedules, docs/triggers.md); also its on-disk history entry. */
export interface ScheduleRun {
  /** The cron slot (ISO time), or undefined for a manual fire. */
  slot?: string;
  fired_at: string;
  task_id?: string;
  project_id?: string;
  /** claimed (written before the start), started, queued, waiting, failed, skipped_missed, skipped_running, replaced. */
  outcome: string;
  error?: string;
  /** In the API's view only: the started task is still running. */
  active?: boolean;
}

/** A schedule as listed by the API, the CLI and the dashboard. */
export interface ScheduleView {
  name: string;
  cron: string;
  timezone: string;
  missed: string;
  max_missed: number;
  concurrency: string;
  project_id: string;
  next_fire?: string;
  last_slot?: string;
  history: ScheduleRun[];
  /** Set when this schedule's record cannot be read (the other schedules are listed). */
  error?: string;
}
