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

export type { ScheduleRun, ScheduleView as Schedule } from '@app/contracts';
