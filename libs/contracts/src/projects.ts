import type { UsageTotals } from './usage';

/** A page of a list endpoint. */
export interface Paginated<T> {
  items: T[];
  total: number;
  limit: number;
  offset: number;
  has_more: boolean;
}

/**
 * The paging fields of a cursor-paged list (issue #29: `/api/projects`, `runs/flat`, `/api/v1/runs`,
 * `/api/v1/tasks`, `/api/v1/questions`, the usage reports): pass `next_cursor` as `after=` while `has_more`.
 */
export interface CursorPaged {
  has_more: boolean;
  next_cursor?: string;
}

export interface Project {
  id: string;
  last_activity: string;
  task_count: number;
  project_root?: string;
}

/** `GET /api/projects/:p/stats`. */
export interface ProjectStats {
  project_id: string;
  total_tasks: number;
  total_runs: number;
  running_runs: number;
  completed_runs: number;
  failed_runs: number;
  crashed_runs: number;
  message_bus_files: number;
  message_bus_total_bytes: number;
}

/** One task of `GET /api/projects/:p/tasks`. */
export interface TaskListItem {
  id: string;
  project_id: string;
  status: string;
  last_activity: string;
  run_count: number;
  done: boolean;
  depends_on?: string[] | null;
  blocked_by?: string[] | null;
  last_run_status?: string;
  /** needs_input: number of open questions (#17). */
  open_questions?: number;
  /** The latest run is flagged stalled (no output, no bus activity). */
  stalled?: boolean;
  queue_position?: number;
  /** #18: usage of the task's runs and its hold state. */
  usage?: UsageTotals & { total_tokens: number };
  resume_at?: string;
  paused?: 'task' | 'project';
  budget_exceeded?: string;
}

/** A task or run file read through the API. */
export interface FileContent {
  name: string;
  content: string;
  modified: string;
  size_bytes: number;
}
