/** The body of `POST /api/v1/tasks`. */
export interface CreateTaskRequest {
  project_id: string;
  task_id: string;
  agent_type: string;
  prompt: string;
  depends_on?: string[];
  attach_mode?: 'create' | 'attach' | 'resume';
  /** Working directory of the agent (an existing folder; `~/` expanded). */
  project_root?: string;
  /** `worktree`: run in a git worktree of project_root's repository (docs/worktrees.md). */
  isolation?: 'worktree' | 'none';
  /** With isolation worktree: branch or commit to start from and merge into. */
  base?: string;
  /** With isolation worktree: repository paths the task expects to change. */
  paths?: string[];
  /** Budget of the task tree (docs/usage-and-budgets.md). */
  max_tokens?: number;
  max_cost_usd?: number;
  /** A duration like `30m` or `2h`. */
  max_wall_time?: string;
  resume_mode?: 'continue' | 'fresh';
  /** Completion criteria (docs/completion-criteria.md): shell commands that must pass before DONE counts. */
  done_criteria?: (string | DoneCriterionInput)[];
  /** Timeout of a criterion without its own (a duration like `5m`; default config defaults.done_criteria_timeout, 10m). */
  done_criteria_timeout?: string;
  /** Fan-out governor: child runs of the task's tree may nest at most this deep (1..1000; default config defaults.max_delegation_depth, 16). */
  max_delegation_depth?: number;
  /** Fan-out governor: unfinished child runs per run in the task's tree (1..100000; default config defaults.max_children_per_run, unset = no limit). */
  max_children_per_run?: number;
  /** Fan-out governor: runs per task tree, root and all descendants (1..100000; default config defaults.max_runs_per_tree, unset = no limit). */
  max_runs_per_tree?: number;
}

/** One completion criterion with its own timeout (a duration like `2m`). */
export interface DoneCriterionInput {
  command: string;
  timeout?: string;
}

/** The answer of `POST /api/v1/tasks`. */
export interface CreateTaskResponse {
  project_id: string;
  task_id: string;
  run_id: string;
  status: string;
  queue_position?: number;
  depends_on?: string[];
}
