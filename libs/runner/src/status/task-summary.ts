// "Where is the task-status rule": here (issue #32). Every listing (run-agent status, watch rows,
// run-agent list, the server's task summary behind /api/projects and /api/v1/tasks) takes the status
// its runs give and lets this rule decide what it shows, and filters with the one table below.
import type { TaskHold } from '../usage/task-view';

/** What decides a task's shown status besides its runs. */
export interface TaskStatusFacts {
  /** The status the task's runs give (the latest run's state; done, blocked, queued or `-` without one). */
  status: string;
  /** A run of the task is running: neither a hold nor a corrupt record hides it. */
  running: boolean;
  /** Open QUESTION/BLOCKED messages without an ANSWER (none once the task is done). */
  openQuestions: number;
  /** rate_limited, paused or budget_exceeded (the task's and its project's markers). */
  hold?: TaskHold;
  /** Why a record of the task (or its latest run-info) cannot be parsed. */
  corruptReason?: string;
}

export interface TaskStatusSummary {
  status: string;
  /** Which part of the rule overrode the runs' status (absent: the runs' status stands). */
  by?: 'needs_input' | 'hold' | 'corrupt';
}

/**
 * The task-status rule, in precedence order: open questions make it `needs_input`; else a hold
 * (rate_limited, paused, budget_exceeded) shows unless a run is running; a corrupt record shows
 * `corrupt` unless a run is running; otherwise the status its runs give.
 */
export function summarizeTask(f: TaskStatusFacts): TaskStatusSummary {
  let out: TaskStatusSummary = { status: f.status };
  if (f.openQuestions > 0) out = { status: 'needs_input', by: 'needs_input' };
  else if (f.hold && !f.running) out = { status: f.hold, by: 'hold' };
  if (f.corruptReason && !f.running) out = { status: 'corrupt', by: 'corrupt' };
  return out;
}

/** What a status filter looks at: the shown status and whether DONE is written. */
export interface FilterableTask {
  status: string;
  done: boolean;
}

const shown =
  (status: string) =>
  (t: FilterableTask): boolean =>
    t.status.toLowerCase() === status;
const isDone = (t: FilterableTask): boolean => t.done;

/**
 * The one status-filter table (`run-agent status --status`, `run-agent list --status`,
 * `?status=` of the task lists): the name a user gives and what it keeps. `running` first (the
 * did-you-mean lists start with it).
 */
export const TASK_STATUS_FILTERS: Readonly<Record<string, (t: FilterableTask) => boolean>> = {
  running: shown('running'),
  active: shown('running'),
  completed: shown('completed'),
  failed: shown('failed'),
  partial_failure: shown('partial_failure'),
  stopped: shown('stopped'),
  cancelled: shown('cancelled'),
  unknown: shown('unknown'),
  queued: shown('queued'),
  postponed: shown('queued'),
  blocked: shown('blocked'),
  needs_input: shown('needs_input'),
  rate_limited: shown('rate_limited'),
  paused: shown('paused'),
  budget_exceeded: shown('budget_exceeded'),
  corrupt: shown('corrupt'),
  done: isDone,
  all_finished: isDone,
  pending: shown('-'),
};

/** The filter names, for usage errors and did-you-mean. */
export const TASK_STATUS_FILTER_NAMES: readonly string[] = Object.keys(TASK_STATUS_FILTERS);

/** The filter a name selects (case-insensitive, trimmed); undefined for an unknown name. */
export function taskStatusFilter(name: string): ((t: FilterableTask) => boolean) | undefined {
  const key = name.trim().toLowerCase();
  return Object.prototype.hasOwnProperty.call(TASK_STATUS_FILTERS, key) ? TASK_STATUS_FILTERS[key] : undefined;
}
