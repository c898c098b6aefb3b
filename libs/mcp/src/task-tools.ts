import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { stopTask, validateTaskSettings } from '@app/runner';
import { byCodeUnits, cursorPage, isIdentifier as isId, StorageIndex } from '@app/storage';
import type { ConductorMcpOptions } from './mcp.types';
import { PAGE_HELP, pageArgs, pageArgsQuery, type PageArgs } from './page-args';
import { addTool } from './register-tool';
import { taskSummary, visibleProjects, type TaskSummary } from './task-state';
import { projectOf, taskOf, type TaskScope } from './tool-scope';
import { McpInputError, toolCall } from './tool-result';

export const WAIT_DEFAULT_S = 300;
export const WAIT_MAX_S = 3600;
/** task_wait reports progress at least this often while nothing changes. */
const PROGRESS_EVERY_MS = 5000;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

interface TaskArgs {
  task: string;
  project?: string;
}

interface ToolExtra {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification: (n: { method: 'notifications/progress'; params: { progressToken: string | number; progress: number; message?: string } }) => Promise<void>;
}

function describe(s: TaskSummary): string {
  const last = s.runs.at(-1);
  return `${s.task_id}: ${s.state}${last ? ` (run ${last.run_id} ${last.status})` : ''}`;
}

export function registerTaskTools(server: McpServer, opts: ConductorMcpOptions, index: StorageIndex, tasks: TaskScope): void {
  const { scope, starter } = opts;
  const pollMs = opts.pollMs ?? 250;
  const summary = (project: string | undefined, task: string | undefined) => {
    const projectId = projectOf(scope, project);
    const taskId = taskOf(task);
    tasks.check(projectId, taskId);
    return taskSummary(index, starter, projectId, taskId);
  };
  const taskArgs = {
    task: z.string().describe('task id'),
    project: z.string().optional().describe('project id (default: the server scope)'),
  };

  addTool<{ prompt: string; agent?: string; task?: string; project?: string; cwd?: string; done_criteria?: string[]; done_criteria_timeout?: string }>(
    server,
    'task_start',
    {
      title: 'Start a sub-task',
      description:
        'Start an agent on a prompt in a new (or named) task of the project, as a child of the calling run; returns project_id, task_id and run_id at once. Follow it with task_wait / task_status.',
      inputSchema: {
        prompt: z.string().describe('the prompt for the agent'),
        agent: z.string().optional().describe('config agent name or agent type (claude, codex, gemini, …)'),
        task: z.string().optional().describe('task id task-YYYYMMDD-HHMMSS-slug (default: generated)'),
        project: z.string().optional().describe('project id (default: the server scope)'),
        cwd: z.string().optional().describe('working directory of the agent (default: the task folder)'),
        done_criteria: z
          .array(z.string())
          .optional()
          .describe('completion criteria: shell commands run in the working directory when the agent writes DONE; any failure sets DONE aside and the job fails'),
        done_criteria_timeout: z.string().optional().describe('timeout of each criterion, a duration like 5m (default 10m)'),
      },
    },
    (args) =>
      toolCall(async () => {
        const projectId = projectOf(scope, args.project);
        if (args.prompt.trim() === '') throw new McpInputError('prompt is empty');
        checkCriteria(args.done_criteria, args.done_criteria_timeout);
        const taskId = args.task?.trim() ? taskOf(args.task) : undefined;
        if (taskId) tasks.checkStart(projectId, taskId);
        const started = await starter.start({ projectId, taskId, prompt: args.prompt, agent: args.agent?.trim() || undefined, cwd: args.cwd?.trim() || undefined, parentRunId: scope.runId, doneCriteria: args.done_criteria, doneCriteriaTimeout: args.done_criteria_timeout });
        tasks.noteStarted(started.project_id, started.task_id);
        return started;
      }),
  );

  addTool<TaskArgs>(
    server,
    'task_status',
    { title: 'Task status', description: 'State of a task and its runs (status, exit code, output resource URI).', inputSchema: taskArgs },
    (args) => toolCall(() => summary(args.project, args.task)),
  );

  addTool<TaskArgs & { timeout_seconds?: number }>(
    server,
    'task_wait',
    {
      title: 'Wait for a task',
      description: `Wait until the task has finished (done, completed or failed) or timeout_seconds (default ${WAIT_DEFAULT_S}, max ${WAIT_MAX_S}) pass; sends progress notifications while waiting. Returns the task status with timed_out.`,
      inputSchema: { ...taskArgs, timeout_seconds: z.number().optional().describe('give up after this many seconds') },
    },
    (args, extra) =>
      toolCall(async () => {
        const timeoutS = args.timeout_seconds ?? WAIT_DEFAULT_S;
        if (!(timeoutS > 0) || timeoutS > WAIT_MAX_S) throw new McpInputError(`invalid timeout_seconds ${timeoutS}: must be > 0 and at most ${WAIT_MAX_S}`);
        return waitForTask(() => summary(args.project, args.task), timeoutS * 1000, pollMs, extra as ToolExtra);
      }),
  );

  addTool<TaskArgs>(
    server,
    'task_stop',
    { title: 'Stop a task', description: 'Stop the task: its running agents get SIGTERM (then SIGKILL) and its loop ends (as `run-agent stop`).', inputSchema: taskArgs },
    (args) =>
      toolCall(async () => {
        const projectId = projectOf(scope, args.project);
        const taskId = taskOf(args.task);
        tasks.check(projectId, taskId);
        const taskDir = index.layout.taskDir(projectId, taskId);
        if (!index.listTasks(projectId).includes(taskId)) throw new McpInputError('task not found');
        const res = await stopTask(taskDir, { stoppedBy: 'mcp task_stop' });
        return { project_id: projectId, task_id: taskId, stopped_runs: res.stoppedRuns };
      }),
  );

  addTool<PageArgs>(
    server,
    'list_projects',
    { title: 'List projects', description: `Projects of the runs root, by id. ${PAGE_HELP}`, inputSchema: { ...pageArgs } },
    (args) =>
      toolCall(() => {
        const q = pageArgsQuery(args, isId);
        const all = scope.confine ? visibleProjects(index).filter((p) => p === scope.projectId) : visibleProjects(index);
        const { page, ...more } = cursorPage([...all].sort(byCodeUnits), (p) => p, q);
        return { projects: page, ...more };
      }),
  );

  addTool<{ project?: string } & PageArgs>(
    server,
    'list_tasks',
    {
      title: 'List tasks',
      description: `Tasks of a project with their state, by task id. ${PAGE_HELP}`,
      inputSchema: { project: z.string().optional().describe('project id (default: the server scope)'), ...pageArgs },
    },
    (args) =>
      toolCall(() => {
        const q = pageArgsQuery(args, isId);
        const projectId = projectOf(scope, args.project);
        // only the page's tasks are read
        const { page, ...more } = cursorPage([...tasks.tasksOf(projectId)].sort(byCodeUnits), (t) => t, q);
        const listed = page.map((t) => {
          const s = taskSummary(index, starter, projectId, t);
          return { task_id: t, state: s.state, runs: s.runs.length, latest_run: s.runs.at(-1)?.run_id ?? '' };
        });
        return { project_id: projectId, tasks: listed, ...more };
      }),
  );
}

/** Polls the task until it has finished or the deadline passes, reporting progress on changes. */
export async function waitForTask(read: () => TaskSummary, timeoutMs: number, pollMs: number, extra: ToolExtra) {
  const deadline = Date.now() + timeoutMs;
  const token = extra._meta?.progressToken;
  let progress = 0;
  let lastText = '';
  let lastSent = 0;
  for (;;) {
    const s = read();
    const text = describe(s);
    if (token !== undefined && (text !== lastText || Date.now() - lastSent >= PROGRESS_EVERY_MS)) {
      lastText = text;
      lastSent = Date.now();
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: ++progress, message: text } }).catch(() => undefined);
    }
    if (s.finished && s.error !== 'task not found') return { ...s, timed_out: false };
    if (Date.now() >= deadline || extra.signal.aborted) return { ...s, timed_out: true };
    await sleep(Math.min(pollMs, Math.max(1, deadline - Date.now())), extra.signal);
  }
}

/** done_criteria / done_criteria_timeout through the runner's one validator; bad input is the caller's error. */
function checkCriteria(criteria: string[] | undefined, timeout: string | undefined): void {
  try {
    validateTaskSettings({ done_criteria: criteria, done_criteria_timeout: timeout });
  } catch (err) {
    throw new McpInputError((err as Error).message);
  }
}
