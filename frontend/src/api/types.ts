// JSON shapes of the conductor API (spec api.md §1, §2, §8) that the dashboard reads: the one wire
// contract in libs/contracts, imported through the `@app/contracts` alias (types only; no runtime
// code crosses from the server tree into the bundle).

export type {
  BusMessage,
  CreateTaskRequest,
  CreateTaskResponse,
  CursorPaged,
  FileContent,
  FlatRun,
  MessageParent,
  OpenQuestion,
  Paginated,
  Project,
  ProjectRun,
  ProjectStats,
  RunFile,
  RunStatus,
  ServerStatus,
  TaskListItem,
  UsageReport,
  UsageTotals,
} from '@app/contracts';

/** One run of a schedule (GET /api/v1/schedules, docs/triggers.md). */
export interface ScheduleRun {
  slot?: string;
  fired_at: string;
  task_id?: string;
  project_id?: string;
  /** claimed, started, queued, waiting, failed, skipped_missed, skipped_running, replaced. */
  outcome: string;
  error?: string;
  active?: boolean;
}

export interface Schedule {
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
  error?: string;
}
