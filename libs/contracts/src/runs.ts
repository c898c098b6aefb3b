import type { UsageTotals } from './usage';

/** Run status values of run-info.yaml, plus states only the wire shows (queued, stopped…). */
export type RunStatus = 'running' | 'completed' | 'failed' | 'unknown' | 'queued' | 'stopped' | (string & {});

/** One file of a run folder as the run views list it. */
export interface RunFile {
  name: string;
  label: string;
  size?: number;
}

/**
 * Added fields of every run shape (issue #12; upstream clients ignore them): `display_status`
 * names stopped and cancelled runs (status `failed`, exit 143 upstream) and `agent_name` is the
 * configured agent (config `agents:` key) the run used.
 */
export interface AddedRunFields {
  display_status: string;
  /** Why a running run waits before its agent starts (display_status `queued`; issue #33). */
  queued_reason?: string;
  agent_name?: string;
  /** Status `corrupt` (issue #29): why the run's run-info.yaml cannot be parsed. */
  corrupt_reason?: string;
}

/** One completion criterion as checked (issue #33). */
export interface CriterionResultView {
  command: string;
  /** -1 when it could not start, timed out or was killed. */
  exit_code: number;
  passed: boolean;
  timed_out?: boolean;
  duration_ms: number;
  error?: string;
  /** Last lines of a failing command's output (bounded). */
  output_tail?: string;
}

/** The completion criteria checked when a run's agent wrote DONE (run-info `criteria`). */
export interface RunCriteriaView {
  passed: boolean;
  reason?: string;
  checked_at: string;
  results: CriterionResultView[];
}

/** A task's completion criteria and its latest check (task detail `criteria`). */
export interface TaskCriteriaInfo {
  commands: { command: string; timeout?: string }[];
  state: 'pending' | 'passed' | 'failed' | 'unresolvable';
  reason?: string;
  run_id?: string;
  checked_at?: string;
  rejected: number;
}

/** ProjectRun (api.md §1.3) plus the D12 superset the React run view reads. */
export interface ProjectRun extends Partial<AddedRunFields> {
  id: string;
  run_id?: string;
  project_id?: string;
  task_id?: string;
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
  version?: number;
  cwd?: string;
  pid?: number;
  pgid?: number;
  commandline?: string;
  /** Added fields (#18): the agent CLI's session id, a rate-limit reset, token usage. */
  session_id?: string;
  resume_at?: string;
  usage?: UsageTotals;
  /** Added field (#33): the completion criteria checked when this run's agent wrote DONE. */
  criteria?: RunCriteriaView;
  /** `bwrap` for a run confined by the sandbox (docs/sandbox.md); absent for unconfined runs. */
  sandbox?: 'bwrap';
  /** Bytes the sandboxed run moved through its egress proxy, per `host:port` (written when the proxy stops). */
  egress_bytes?: Record<string, number>;
  files?: RunFile[];
}

/** RunV1 (`GET /api/v1/runs/:id`): end_time always present, exit_code omitted when 0. */
export interface RunV1 extends Partial<AddedRunFields> {
  run_id: string;
  project_id: string;
  task_id: string;
  status: RunStatus;
  process_ownership?: string;
  start_time: string;
  end_time: string;
  exit_code?: number;
  agent_version?: string;
  error_summary?: string;
  /** Added field (#33): the completion criteria checked when this run's agent wrote DONE. */
  criteria?: RunCriteriaView;
}

/** A run in the flat run lists (`/api/projects/:p/runs/flat`, task run pages). */
export interface FlatRun extends Partial<AddedRunFields> {
  id: string;
  task_id: string;
  agent: string;
  status: RunStatus;
  exit_code: number;
  start_time: string;
  end_time?: string;
  parent_run_id?: string;
  previous_run_id?: string;
  /** Why a run failed (e.g. the task could not start). */
  error_summary?: string;
  /** `bwrap` for a sandboxed run (docs/sandbox.md), with its egress bytes per `host:port`. */
  sandbox?: 'bwrap';
  egress_bytes?: Record<string, number>;
}
