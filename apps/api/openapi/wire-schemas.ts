import type { BusMessage, CreateTaskResponse, CriterionResultView, FileContent, FlatRun, OpenQuestion, Project, ProjectRun, ProjectStats, RunFile, RunCriteriaView, RunV1, ServerStatus, TaskCriteriaInfo, TaskListItem, UsageReport, UsageTotals } from '@app/contracts';
import { API_ERROR_CODES } from '../src/common/api-error';
import type { Schema } from './dto-schemas';
import { RUN_OUTPUT_FILE } from '@app/storage';

/**
 * JSON Schemas of the response shapes (docs/api-reference.md "Shapes"), used only by the OpenAPI
 * generator. `shape<T>` takes one schema per field of the libs/contracts type T, so a field added
 * to (or removed from) a contract fails the typecheck here until the schema follows.
 */
function shape<T>(props: { [K in keyof Required<T>]-?: Schema }, optional: readonly (keyof T)[], extra: Schema = {}): Schema {
  const required = Object.keys(props).filter((k) => !optional.includes(k as keyof T));
  return { type: 'object', properties: props, ...(required.length ? { required } : {}), ...extra };
}

const str: Schema = { type: 'string' };
const int: Schema = { type: 'integer' };
const num: Schema = { type: 'number' };
const bool: Schema = { type: 'boolean' };
const time: Schema = { type: 'string', format: 'date-time', description: 'RFC 3339 UTC; an unset time is 0001-01-01T00:00:00Z' };
const strings: Schema = { type: 'array', items: str };
const stringMap: Schema = { type: 'object', additionalProperties: str };
/** Task states besides the loop's own (project-data.service.ts task()): open questions, a hold marker, a corrupt record. */
const TASK_MARKED = ['needs_input', 'rate_limited', 'paused', 'budget_exceeded', 'corrupt'];
export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
/** The paging fields of a cursor-paged list (issue #29). */
const paging = {
  has_more: { type: 'boolean', description: 'more items follow: pass next_cursor as after=' } as Schema,
  next_cursor: { type: 'string', description: 'present while has_more: the after= of the next page' } as Schema,
};
/** `{<key>: T[], has_more, next_cursor?}`: one page of a cursor-paged list. */
const listOf = (key: string, item: string): Schema => ({ type: 'object', properties: { [key]: { type: 'array', items: ref(item) }, ...paging }, required: [key, 'has_more'] });
const usageRows = (description: string): Schema => ({ type: 'array', description, items: obj({ key: str, runs: int, usage: ref('UsageTotals'), total_tokens: int }, ['key', 'runs', 'usage', 'total_tokens']) });
const obj = (properties: Record<string, Schema>, required: string[] = []): Schema => ({ type: 'object', properties, ...(required.length ? { required } : {}) });

const usageTotals = shape<UsageTotals>(
  { input_tokens: int, output_tokens: int, cache_read_tokens: int, cache_write_tokens: int, cost_usd: num, partial: bool },
  ['cost_usd', 'partial'],
);
const runFile = shape<RunFile>({ name: { type: 'string', enum: [RUN_OUTPUT_FILE, 'stdout', 'stderr', 'prompt'] }, label: str, size: int }, ['size']);
const addedRun = { display_status: { ...str, description: '`status`, except `stopped`/`cancelled` for a run ended by a stop and `queued` for a running run that waits for admission' }, queued_reason: { ...str, description: 'why the run waits before its agent starts (display_status `queued`; fan-out governor, memory admission)' }, agent_name: { ...str, description: 'the configured agent (`agents:` key)' }, corrupt_reason: { ...str, description: 'why the run\'s record could not be read (status `corrupt`)' } };

export const WIRE_SCHEMAS: Record<string, Schema> = {
  Error: obj({ error: obj({ code: { type: 'string', enum: [...API_ERROR_CODES] }, message: str, details: { type: 'object', additionalProperties: true } }, ['code', 'message']) }, ['error']),
  Unauthorized: obj({ error: { type: 'string', enum: ['unauthorized'] }, message: str }, ['error', 'message']),
  UsageTotals: usageTotals,
  Project: shape<Project>({ id: str, last_activity: time, task_count: int, project_root: str }, ['project_root']),
  ProjectStats: shape<ProjectStats>(
    { project_id: str, total_tasks: int, total_runs: int, running_runs: int, completed_runs: int, failed_runs: int, crashed_runs: int, message_bus_files: int, message_bus_total_bytes: int },
    [],
  ),
  TaskListItem: shape<TaskListItem>(
    {
      id: str, project_id: str, status: str, last_activity: time, run_count: int, done: bool,
      depends_on: { ...strings, nullable: true }, blocked_by: { ...strings, nullable: true }, last_run_status: str,
      open_questions: int, stalled: bool, queue_position: int,
      usage: { allOf: [ref('UsageTotals'), obj({ total_tokens: int }, ['total_tokens'])] },
      resume_at: time, paused: { type: 'string', enum: ['task', 'project'] }, budget_exceeded: str,
    },
    ['depends_on', 'blocked_by', 'last_run_status', 'open_questions', 'stalled', 'queue_position', 'usage', 'resume_at', 'paused', 'budget_exceeded'],
    { additionalProperties: true, description: 'also run_counts, thread_parent and last_run_* fields (docs/api-reference.md)' },
  ),
  PaginatedTasks: paginated('TaskListItem'),
  PaginatedRuns: paginated('ProjectRun'),
  RunFile: runFile,
  ProjectRun: shape<ProjectRun>(
    {
      id: str, run_id: str, project_id: str, task_id: str, agent: str, agent_version: str, status: str, process_ownership: str,
      exit_code: { ...int, description: '-1 while running' }, start_time: time, end_time: time, parent_run_id: str, previous_run_id: str,
      error_summary: str, version: int, cwd: str, pid: int, pgid: int, commandline: str, session_id: str, resume_at: time,
      usage: ref('UsageTotals'), criteria: ref('RunCriteria'), files: { type: 'array', items: ref('RunFile') }, ...addedRun,
      sandbox: { type: 'string', enum: ['bwrap'], description: 'the sandbox the run is confined by (absent: none)' },
      egress_bytes: { type: 'object', additionalProperties: int, description: 'bytes moved through the egress proxy per `host:port` (sandboxed runs)' },
    },
    ['sandbox', 'egress_bytes', 'run_id', 'project_id', 'task_id', 'agent_version', 'process_ownership', 'end_time', 'parent_run_id', 'previous_run_id', 'error_summary', 'version', 'cwd', 'pid', 'pgid', 'commandline', 'session_id', 'resume_at', 'usage', 'criteria', 'files', 'display_status', 'queued_reason', 'agent_name', 'corrupt_reason'],
  ),
  RunV1: shape<RunV1>(
    { run_id: str, project_id: str, task_id: str, status: str, process_ownership: str, start_time: time, end_time: time, exit_code: { ...int, description: 'omitted when 0' }, agent_version: str, error_summary: str, criteria: ref('RunCriteria'), ...addedRun },
    ['process_ownership', 'exit_code', 'agent_version', 'error_summary', 'criteria', 'display_status', 'queued_reason', 'agent_name', 'corrupt_reason'],
  ),
  FlatRun: shape<FlatRun>(
    { id: str, task_id: str, agent: str, status: str, exit_code: int, start_time: time, end_time: time, parent_run_id: str, previous_run_id: str, error_summary: str, ...addedRun,
      sandbox: { type: 'string', enum: ['bwrap'], description: 'the sandbox the run is confined by (absent: none)' },
      egress_bytes: { type: 'object', additionalProperties: int, description: 'bytes moved through the egress proxy per `host:port` (sandboxed runs)' } },
    ['sandbox', 'egress_bytes', 'end_time', 'parent_run_id', 'previous_run_id', 'error_summary', 'display_status', 'queued_reason', 'agent_name', 'corrupt_reason'],
  ),
  TaskV1: obj(
    { project_id: str, task_id: str, status: { type: 'string', enum: ['idle', 'running', 'partial_failure', 'all_finished', 'blocked', 'queued', ...TASK_MARKED] }, queue_position: int, last_activity: time, depends_on: strings, blocked_by: strings },
    ['project_id', 'task_id', 'status', 'last_activity'],
  ),
  TaskV1Detail: { allOf: [ref('TaskV1'), obj({ worktree: ref('WorktreeView'), criteria: ref('TaskCriteria'), runs: { type: 'array', items: ref('RunV1') } })] },
  WorktreeView: obj(
    { path: str, branch: str, base_commit: str, base_branch: str, port: int, paths: strings, merge_status: str, merge_detail: str, merge_files: strings, merged_commit: str,
      setup_script: obj({ path: str, sha256: { ...str, description: 'sha256 of the approved repository setup script that ran in the worktree (run-agent approve-setup)' } }, ['path', 'sha256']),
      merge_queue: obj(
        {
          seq: int, state: { type: 'string', enum: ['queued', 'verifying', 'merged', 'failed'] }, position: { ...int, description: 'place among the pending merges of the repository (1 = running or next)' },
          outcome: { type: 'string', enum: ['merged', 'nothing', 'conflict', 'failed', 'error', 'timeout'] }, attempts: int, queued_at: str, started_at: str, finished_at: str, detail: str,
        },
        ['seq', 'state', 'attempts', 'queued_at'],
      ) },
    ['path', 'branch', 'base_commit'],
  ),
  TaskDetail: obj(
    {
      id: str, project_id: str, status: str, state: { type: 'string', enum: ['idle', 'running', 'done', 'blocked', 'queued', ...TASK_MARKED] }, queue_position: int,
      last_activity: time, created_at: time, done: bool, depends_on: strings, blocked_by: strings, thread_parent: { type: 'object', additionalProperties: true },
      open_questions: { type: 'array', items: ref('OpenQuestion') }, stalled: bool, criteria: ref('TaskCriteria'), runs: { type: 'array', items: ref('ProjectRun') },
    },
    ['id', 'project_id', 'status', 'state', 'last_activity', 'created_at', 'done', 'runs'],
  ),
  CriterionResult: shape<CriterionResultView>(
    { command: str, exit_code: { ...int, description: '-1 when it could not start, timed out or was killed' }, passed: bool, timed_out: bool, duration_ms: int, error: str, output_tail: { ...str, description: 'last lines of a failing command\'s output (bounded)' } },
    ['timed_out', 'error', 'output_tail'],
  ),
  RunCriteria: shape<RunCriteriaView>(
    { passed: bool, reason: str, checked_at: time, results: { type: 'array', items: ref('CriterionResult') } },
    ['reason'],
    { description: 'completion criteria checked when the run\'s agent wrote DONE (docs/completion-criteria.md)' },
  ),
  TaskCriteria: shape<TaskCriteriaInfo>(
    {
      commands: { type: 'array', items: obj({ command: str, timeout: str }, ['command']) },
      state: { type: 'string', enum: ['pending', 'passed', 'failed', 'unresolvable'] },
      reason: str, run_id: str, checked_at: time, rejected: { ...int, description: 'DONEs the criteria rejected so far' },
    },
    ['reason', 'run_id', 'checked_at'],
  ),
  FileContent: shape<FileContent>({ name: str, content: str, modified: time, size_bytes: int }, []),
  Message: shape<BusMessage>(
    {
      msg_id: str, timestamp: time, type: str, project_id: str, task_id: str, run_id: str, issue_id: str,
      parents: { type: 'array', nullable: true, items: { oneOf: [str, obj({ msg_id: str, kind: str, meta: stringMap })] } },
      links: { type: 'array', items: obj({ url: str, label: str, kind: str }, ['url']) }, meta: stringMap, body: str,
    },
    ['type', 'project_id', 'task_id', 'run_id', 'issue_id', 'parents', 'links', 'meta'],
  ),
  Messages: listOf('messages', 'Message'),
  Projects: listOf('projects', 'Project'),
  FlatRuns: listOf('runs', 'FlatRun'),
  TasksV1: listOf('tasks', 'TaskV1'),
  RunsV1: listOf('runs', 'RunV1'),
  OpenQuestions: listOf('questions', 'OpenQuestion'),
  PostedMessage: obj({ msg_id: str, timestamp: time, resumed: bool, reopened: bool, loop: { type: 'string', enum: ['running', 'started', 'not_started'] } }, ['msg_id', 'timestamp']),
  OpenQuestion: shape<OpenQuestion>({ msg_id: str, type: str, timestamp: time, project_id: str, task_id: str, run_id: str, body: str }, ['task_id', 'run_id']),
  CreateTaskResponse: shape<CreateTaskResponse>(
    { project_id: str, task_id: str, run_id: str, status: { type: 'string', enum: ['started', 'queued'] }, queue_position: int, depends_on: strings },
    ['queue_position', 'depends_on'],
  ),
  UsageReport: shape<UsageReport>(
    {
      project_id: str, task_id: str, since: time, runs: int, usage: ref('UsageTotals'), total_tokens: int,
      tree: obj({ runs: int, usage: ref('UsageTotals'), total_tokens: int }, ['runs', 'usage', 'total_tokens']),
      by_agent: usageRows('one page of the rows (agents, then projects, then tasks, at most `limit` in all)'),
      by_project: usageRows('rows after the agents on this page'),
      by_task: usageRows('rows `<project>/<task>` after the projects on this page'),
      egress_bytes: { type: 'object', additionalProperties: int, description: 'bytes the selected sandboxed runs moved through their egress proxies, per `host:port` (both directions; absent when none was sandboxed)' },
      ...paging,
    },
    ['project_id', 'task_id', 'since', 'tree', 'next_cursor', 'egress_bytes'],
  ),
  Diff: obj({ task_id: str, branch: str, base_commit: str, files: { type: 'array', items: { type: 'object', additionalProperties: true } }, patch: str, worktree: ref('WorktreeView') }, ['task_id', 'branch', 'base_commit', 'files', 'patch']),
  PullRequestSync: obj(
    {
      project_id: str, task_id: str,
      outcome: { type: 'string', enum: ['not_forge', 'nothing_to_push', 'opened', 'updated', 'unchanged', 'stopped', 'failed'], description: '`nothing_to_push`: the task\'s branch has no commits its base lacks (no pull request yet)' },
      number: int, url: str, ready: bool, error: str,
    },
    ['project_id', 'task_id', 'outcome'],
  ),
  PullRequestRecord: obj(
    {
      project_id: str, task_id: str, repository: str, source: { ...str, description: 'the forge rule whose issue started the task, or `request`' }, state: { type: 'string', enum: ['started', 'stopped'] },
      pull: obj({ state: { type: 'string', enum: ['opening', 'open', 'closed'] }, branch: str, number: int, node_id: str, url: str, draft: bool, ready_at: time, body_sha: str, etag: str }, ['state', 'branch']),
    },
    ['project_id', 'task_id', 'repository', 'source', 'state'],
  ),
  MergeResult: obj({ task_id: str, branch: str, base_branch: str, commit: str, already_merged: bool, worktree: ref('WorktreeView') }, ['task_id', 'branch', 'commit', 'already_merged']),
  ServerStatus: shape<ServerStatus>(
    {
      active_runs_count: int, uptime_seconds: num, configured_agents: strings, default_agent: { ...str, description: 'config `defaults.agent` (omitted when unset)' }, version: str, pull_requests: { ...bool, description: 'the server can open GitHub pull requests (forge.github with a token; docs/triggers.md)' },
      running_tasks: { type: 'array', items: obj({ project_id: str, task_id: str, run_id: str, agent: str, started: time }, ['project_id', 'task_id', 'run_id', 'agent', 'started']) },
    },
    ['default_agent'],
  ),
  SelfUpdateStatus: obj(
    {
      state: { type: 'string', enum: ['idle', 'deferred', 'applying', 'failed'] }, package: str, binary_path: str, requested_at: time, started_at: time, finished_at: time,
      active_runs_at_request: int, active_runs_now: int, active_runs_error: str, last_error: str, last_note: str,
    },
    ['state', 'requested_at', 'started_at', 'finished_at'],
  ),
  PauseState: obj({ project_id: str, task_id: str, paused: bool, changed: bool }, ['project_id', 'paused', 'changed']),
};

function paginated(item: string): Schema {
  return obj({ items: { type: 'array', items: ref(item) }, total: int, limit: int, offset: int, has_more: bool }, ['items', 'total', 'limit', 'offset', 'has_more']);
}
