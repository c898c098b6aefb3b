import type { Schema } from './dto-schemas';
import { ref } from './wire-schemas';

/**
 * What the controllers do not say about each operation (docs/api-reference.md "Routes"): its
 * summary, success answer, queries read from the raw request, which queries are required, and
 * whether it is open without the API key. Keyed by `METHOD path` as the generated document spells
 * it; the generator fails on an operation missing here, or on an entry no route has.
 */
export interface OperationInfo {
  summary: string;
  /** Success status and body; a string is a non-JSON media type (SSE, Prometheus text, YAML), several are alternatives. */
  ok: { status: number; schema?: Schema; media?: string | string[] };
  /** A second success answer, 202 (MCP: a notification or a response, no body). */
  accepted?: string;
  /** The 202 answer carries the success answer's body too. */
  acceptedWithBody?: boolean;
  /** A JSON request body the handler reads itself (not a DTO). */
  jsonBody?: Schema;
  /** Not behind the API key, but guarded by a credential of its own (a trigger token, a webhook signature): 401 without it. */
  ownToken?: boolean;
  /** Queries the handler reads itself (not through `@Query`). */
  extraQueries?: Record<string, Schema>;
  requiredQueries?: string[];
  /** Open without the API key (docs/api-reference.md "Authentication"). */
  open?: boolean;
  /** Refused from a browser (docs/api-reference.md "Browser protection"). */
  browserBlocked?: boolean;
}

const json = (status: number, schema: Schema) => ({ status, schema });
const sse = { status: 200, media: 'text/event-stream' };
const obj = (properties: Record<string, Schema>, required: string[] = Object.keys(properties)): Schema => ({ type: 'object', properties, required });
const str: Schema = { type: 'string' };
const int: Schema = { type: 'integer' };
const bool: Schema = { type: 'boolean' };
const messages = json(200, ref('Messages'));
const posted = json(201, ref('PostedMessage'));
const pause = json(200, ref('PauseState'));

export const OPERATIONS: Record<string, OperationInfo> = {
  'GET /healthz': { summary: 'Liveness with uptime (Go duration)', ok: json(200, obj({ status: str, uptime: str })), open: true },
  'GET /api/v1/health': { summary: 'Health', ok: json(200, obj({ status: str })), open: true },
  'GET /api/v1/version': { summary: 'Server version', ok: json(200, obj({ version: str })), open: true },
  'GET /api/v1/status': { summary: 'Server status, configured agents and running tasks', ok: json(200, ref('ServerStatus')) },
  'GET /metrics': { summary: 'Prometheus metrics (open only with api.metrics_public)', ok: { status: 200, media: 'text/plain' } },
  'GET /api/openapi.json': { summary: 'This OpenAPI document', ok: json(200, { type: 'object', additionalProperties: true }) },
  'GET /api/v1/admin/self-update': { summary: 'Self-update status', ok: json(200, ref('SelfUpdateStatus')) },
  'POST /api/v1/admin/self-update': { summary: 'Request a self-update', ok: json(202, ref('SelfUpdateStatus')) },

  'GET /api/v1/tasks': { summary: 'Tasks with a TASK.md, by project then task (cursor-paged: limit 1000, at most 5000)', ok: json(200, ref('TasksV1')) },
  'POST /api/v1/tasks': { summary: 'Create and start (or queue) a task', ok: json(201, ref('CreateTaskResponse')) },
  'GET /api/v1/tasks/{id}': { summary: 'One task with its runs', ok: json(200, ref('TaskV1Detail')) },
  'DELETE /api/v1/tasks/{id}': { summary: "Cancel a task (writes DONE, stops its runs)", ok: json(202, obj({ stopped_runs: int })), extraQueries: { project_id: str } },
  'GET /api/v1/tasks/{id}/diff': { summary: "A worktree task's diff", ok: json(200, ref('Diff')) },
  'POST /api/v1/tasks/{id}/merge': { summary: "Merge a worktree task's branch", ok: json(200, ref('MergeResult')) },
  'POST /api/v1/tasks/{id}/pull-request': { summary: "Push a worktree task's branch and open or update its GitHub pull request (the merge's pull-request mode)", ok: json(200, ref('PullRequestSync')) },
  'GET /api/v1/tasks/{id}/pull-request': { summary: "A task's recorded GitHub pull request", ok: json(200, ref('PullRequestRecord')) },
  'GET /api/v1/runs': { summary: 'All runs, by run id (cursor-paged: limit 1000, at most 5000)', ok: json(200, ref('RunsV1')) },
  'GET /api/v1/runs/{r}': { summary: 'One run', ok: json(200, ref('RunV1')) },
  'GET /api/v1/runs/{r}/info': { summary: 'Raw run-info.yaml', ok: { status: 200, media: 'application/x-yaml' } },
  'POST /api/v1/runs/{r}/stop': { summary: 'Stop a run', ok: json(202, obj({ status: str })) },
  'GET /api/v1/runs/{r}/stream': { summary: 'SSE: the run log', ok: sse },
  'GET /api/v1/runs/stream/all': { summary: "SSE: every run's log and status", ok: sse },
  'GET /api/v1/messages': { summary: 'Messages of a project or task bus', ok: messages, requiredQueries: ['project_id'] },
  'POST /api/v1/messages': { summary: 'Post a message', ok: json(201, obj({ msg_id: str, timestamp: str })) },
  'GET /api/v1/messages/stream': { summary: 'SSE: messages', ok: sse, requiredQueries: ['project_id'] },
  'GET /api/v1/usage': { summary: 'Usage report (rows cursor-paged: limit 1000, at most 5000)', ok: json(200, ref('UsageReport')) },
  'GET /api/v1/questions': { summary: 'Open questions across projects, by project, task and msg_id (cursor-paged: limit 1000, at most 5000)', ok: json(200, ref('OpenQuestions')) },
  'GET /api/v1/schedules': {
    summary: 'Schedules of the config with next fire time and run history (docs/triggers.md)',
    ok: json(200, obj({ schedules: { type: 'array', items: { type: 'object', additionalProperties: true } } })),
  },
  'POST /api/v1/schedules/{name}/fire': { summary: "Start a schedule's task now (concurrency policy applies; slots unchanged)", ok: json(201, obj({ schedule: str, run: { type: 'object', additionalProperties: true } })) },
  'POST /api/v1/triggers/{name}': {
    summary: "HTTP trigger: starts the trigger's task with the JSON payload in its prompt. Auth: the trigger's own bearer token, not the API key (401 without it); Idempotency-Key replays answer 200 with the same task",
    ok: json(201, obj({ trigger: str, project_id: str, task_id: str, run_id: str, status: str, replayed: bool }, ['trigger', 'project_id', 'task_id', 'status', 'replayed'])),
    open: true,
    ownToken: true,
  },
  'POST /api/v1/forge/github': {
    summary:
      'GitHub webhook deliveries (docs/triggers.md). Auth: X-Hub-Signature-256 with forge.github.webhook_secret, not the API key (401 without it; 404 when no forge.github is configured). 200 when acted on (outcome started, woken, needs_input, stopped); 202 with the same body when ignored, a redelivery (duplicate) or a ping',
    ok: json(200, obj({ delivery: str, event: str, outcome: str, project_id: str, task_id: str, reason: str }, ['delivery', 'event', 'outcome'])),
    accepted: 'ignored, a redelivery (duplicate) or a ping',
    acceptedWithBody: true,
    ownToken: true,
    open: true,
  },

  'GET /api/projects': { summary: 'Projects, newest activity first (cursor-paged: limit 1000, at most 5000)', ok: json(200, ref('Projects')) },
  'POST /api/projects': { summary: 'Register a project root', ok: json(201, ref('Project')) },
  'GET /api/projects/home-dirs': { summary: 'Directories under the home folder (at most 20)', ok: json(200, obj({ dirs: { type: 'array', items: str, maxItems: 20 } })) },
  'GET /api/projects/{p}': { summary: 'One project', ok: json(200, ref('Project')) },
  'DELETE /api/projects/{p}': { summary: 'Delete a project', ok: json(200, obj({ project_id: str, deleted_tasks: int, freed_bytes: int })), extraQueries: { force: bool }, browserBlocked: true },
  'GET /api/projects/{p}/stats': { summary: 'Project statistics', ok: json(200, ref('ProjectStats')) },
  'GET /api/projects/{p}/runs/flat': { summary: "The dashboard's run tree, in start order (cursor-paged: limit 1000, at most 5000)", ok: json(200, ref('FlatRuns')) },
  'POST /api/projects/{p}/gc': {
    summary: 'Delete old runs',
    ok: json(200, obj({ deleted_runs: int, freed_bytes: int, dry_run: bool })),
    extraQueries: { older_than: { type: 'string', default: '168h' }, dry_run: bool, keep_failed: bool },
    browserBlocked: true,
  },
  'GET /api/projects/{p}/messages': { summary: 'Project bus messages, oldest first', ok: messages },
  'POST /api/projects/{p}/messages': { summary: 'Post to the project bus', ok: posted },
  'GET /api/projects/{p}/messages/stream': { summary: 'SSE: project bus', ok: sse },
  'GET /api/projects/{p}/usage': { summary: "The project's usage (rows cursor-paged)", ok: json(200, ref('UsageReport')) },
  'POST /api/projects/{p}/pause': { summary: 'Hold every loop of the project', ok: pause },
  'POST /api/projects/{p}/unpause': { summary: 'Release the project', ok: pause },
  'GET /api/projects/{p}/tasks': { summary: 'Tasks, newest first', ok: json(200, ref('PaginatedTasks')) },
  'GET /api/projects/{p}/tasks/{t}': { summary: 'Task detail', ok: json(200, ref('TaskDetail')) },
  'DELETE /api/projects/{p}/tasks/{t}': { summary: 'Delete a task', ok: { status: 204 }, browserBlocked: true },
  'POST /api/projects/{p}/tasks/{t}/resume': { summary: 'Remove DONE', ok: json(200, obj({ project_id: str, task_id: str, resumed: bool })) },
  'GET /api/projects/{p}/tasks/{t}/diff': { summary: "A worktree task's diff", ok: json(200, ref('Diff')) },
  'POST /api/projects/{p}/tasks/{t}/merge': { summary: "Merge a worktree task's branch", ok: json(200, ref('MergeResult')) },
  'POST /api/projects/{p}/tasks/{t}/pull-request': { summary: "Push a worktree task's branch and open or update its GitHub pull request (the merge's pull-request mode)", ok: json(200, ref('PullRequestSync')) },
  'GET /api/projects/{p}/tasks/{t}/pull-request': { summary: "A task's recorded GitHub pull request", ok: json(200, ref('PullRequestRecord')) },
  'GET /api/projects/{p}/tasks/{t}/file': { summary: 'A task file (TASK.md)', ok: json(200, ref('FileContent')) },
  'GET /api/projects/{p}/tasks/{t}/messages': { summary: 'Task bus messages', ok: messages },
  'POST /api/projects/{p}/tasks/{t}/messages': { summary: 'Post to the task bus (resume: true wakes the task)', ok: posted },
  'GET /api/projects/{p}/tasks/{t}/messages/stream': { summary: 'SSE: task bus', ok: sse },
  'POST /api/projects/{p}/tasks/{t}/answer': { summary: 'Answer the open questions', ok: json(201, obj({ msg_id: str, timestamp: str, answers: { type: 'array', items: str } })) },
  'GET /api/projects/{p}/tasks/{t}/usage': { summary: "The task's usage and its tree (rows cursor-paged)", ok: json(200, ref('UsageReport')) },
  'POST /api/projects/{p}/tasks/{t}/pause': { summary: 'Hold the task', ok: pause },
  'POST /api/projects/{p}/tasks/{t}/unpause': { summary: 'Release the task', ok: pause },
  'GET /api/projects/{p}/tasks/{t}/runs': { summary: "The task's runs, newest first", ok: json(200, ref('PaginatedRuns')) },
  'GET /api/projects/{p}/tasks/{t}/runs/stream': { summary: "SSE: the task's runs (+ run_start/run_end)", ok: sse },
  'GET /api/projects/{p}/tasks/{t}/runs/{r}': { summary: 'One run with its files', ok: json(200, ref('ProjectRun')) },
  'DELETE /api/projects/{p}/tasks/{t}/runs/{r}': { summary: 'Delete a run', ok: { status: 204 }, browserBlocked: true },
  'POST /api/projects/{p}/tasks/{t}/runs/{r}/stop': { summary: 'Stop a run', ok: json(202, obj({ run_id: str, message: str })) },
  'GET /api/projects/{p}/tasks/{t}/runs/{r}/file': { summary: 'A run file (stdout, stderr, prompt, output.md)', ok: json(200, ref('FileContent')) },
  'GET /api/projects/{p}/tasks/{t}/runs/{r}/stream': { summary: 'SSE: raw tail of a run file', ok: sse },

  'POST /mcp': {
    summary: 'MCP Streamable HTTP (JSON-RPC; docs/mcp.md)',
    ok: { status: 200, media: ['application/json', 'text/event-stream'] },
    accepted: 'a JSON-RPC notification or response, accepted (no body)',
    jsonBody: { oneOf: [{ type: 'object', additionalProperties: true }, { type: 'array', items: { type: 'object', additionalProperties: true } }], description: 'a JSON-RPC message or a batch' },
  },
  'GET /mcp': { summary: 'MCP server-to-client stream', ok: sse },
  'DELETE /mcp': { summary: 'End an MCP session', ok: { status: 200 } },
};
