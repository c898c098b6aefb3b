// JSON shapes of the conductor API (spec api.md §1, §2, §8) that the dashboard reads.

export type RunStatus = 'running' | 'completed' | 'failed' | 'unknown' | 'queued' | 'stopped' | string;

export interface Project {
  id: string;
  last_activity: string;
  task_count: number;
  project_root?: string;
}

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

export interface FlatRun {
  id: string;
  task_id: string;
  agent: string;
  status: RunStatus;
  /** Added by this server (issue #12): stopped / cancelled where `status` says failed. */
  display_status?: string;
  /** Added by this server: the configured agent name (config `agents:` key). */
  agent_name?: string;
  exit_code: number;
  start_time: string;
  end_time?: string;
  parent_run_id?: string;
  previous_run_id?: string;
  error_summary?: string;
}

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
  /** #18: usage of the task's runs and its hold state. */
  usage?: UsageTotals & { total_tokens: number };
  resume_at?: string;
  paused?: 'task' | 'project';
  budget_exceeded?: string;
}

/** Token usage (run-info `usage:`), summed. */
export interface UsageTotals {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd?: number;
}

/** GET /api/projects/:p/tasks/:t/usage (#18). */
export interface UsageReport {
  project_id?: string;
  task_id?: string;
  runs: number;
  usage: UsageTotals;
  total_tokens: number;
  tree?: { runs: number; usage: UsageTotals; total_tokens: number };
  by_agent: { key: string; runs: number; usage: UsageTotals; total_tokens: number }[];
}

/** GET /api/v1/questions: a QUESTION/BLOCKED message without an ANSWER. */
export interface OpenQuestion {
  msg_id: string;
  type: string;
  timestamp: string;
  project_id: string;
  task_id?: string;
  run_id?: string;
  body: string;
}

export interface Paginated<T> {
  items: T[];
  total: number;
  limit: number;
  offset: number;
  has_more: boolean;
}

export interface RunFile {
  name: string;
  label: string;
  size?: number;
}

export interface ProjectRun {
  id: string;
  run_id?: string;
  agent: string;
  agent_version?: string;
  status: RunStatus;
  process_ownership?: string;
  exit_code: number;
  start_time: string;
  end_time?: string;
  parent_run_id?: string;
  previous_run_id?: string;
  error_summary?: string;
  files?: RunFile[];
  [extra: string]: unknown;
}

export interface FileContent {
  name: string;
  content: string;
  modified: string;
  size_bytes: number;
}

export type MessageParent = string | { msg_id?: string; MsgID?: string; kind?: string };

export interface BusMessage {
  msg_id: string;
  timestamp: string;
  type?: string;
  project_id?: string;
  task_id?: string;
  run_id?: string;
  parents?: MessageParent[] | null;
  meta?: Record<string, string>;
  body: string;
}

export interface CreateTaskRequest {
  project_id: string;
  task_id: string;
  agent_type: string;
  prompt: string;
  depends_on?: string[];
  attach_mode?: 'create' | 'attach' | 'resume';
}

export interface CreateTaskResponse {
  project_id: string;
  task_id: string;
  run_id: string;
  status: string;
}
