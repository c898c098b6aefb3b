import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { askQuestion, isUsageCursor, usagePage, usageReport, waitForAnswer } from '@app/runner';
import type { McpBusParts, McpScope } from './mcp.types';
import { PAGE_HELP, pageArgs, pageArgsQuery, type PageArgs } from './page-args';
import { addTool } from './register-tool';
import { busTaskOf, projectOf, taskOf, type TaskScope } from './tool-scope';
import { McpInputError, toolCall } from './tool-result';

export const ASK_WAIT_MAX_S = 3600;

interface AskArgs {
  body: string;
  type?: string;
  wait?: boolean;
  timeout_s?: number;
  project?: string;
  task?: string;
}

interface UsageArgs extends PageArgs {
  project?: string;
  task?: string;
  since?: string;
}

/**
 * `ask` (the needs-input question, #17: as `run-agent ask [--wait]`) and `usage` (the usage report,
 * #18: as `run-agent usage --json`).
 */
export function registerUsageAndAskTools(server: McpServer, scope: McpScope, tasks: TaskScope, { layout, writers }: McpBusParts): void {
  addTool<AskArgs>(
    server,
    'ask',
    {
      title: 'Ask the task owner a question',
      description:
        "Post a QUESTION (or BLOCKED) to the task's bus: the task enters needs_input and its Ralph loop starts no new attempt until it is answered. " +
        'With wait: true, blocks until the ANSWER arrives (or timeout_s) and returns it.',
      inputSchema: {
        body: z.string().describe('the question'),
        type: z.string().optional().describe('QUESTION (default) or BLOCKED'),
        wait: z.boolean().optional().describe('wait for the answer and return it'),
        timeout_s: z.number().optional().describe(`with wait: give up after this many seconds (default and max ${ASK_WAIT_MAX_S})`),
        project: z.string().optional().describe('project id (default: the server scope)'),
        task: z.string().optional().describe('task id (default: the server scope)'),
      },
    },
    (args, extra) =>
      toolCall(async () => {
        const type = (args.type ?? 'QUESTION').trim().toUpperCase();
        if (type !== 'QUESTION' && type !== 'BLOCKED') throw new McpInputError(`type must be QUESTION or BLOCKED, got "${args.type}"`);
        const projectId = projectOf(scope, args.project);
        const taskId = busTaskOf(scope, projectId, args.task);
        if (!taskId) throw new McpInputError('task is required: this server is not scoped to a task (pass task)');
        tasks.check(projectId, taskId);
        const timeout = args.timeout_s ?? ASK_WAIT_MAX_S;
        if (!(timeout > 0) || timeout > ASK_WAIT_MAX_S) throw new McpInputError(`timeout_s must be between 0 and ${ASK_WAIT_MAX_S}`);
        const busPath = layout.taskBus(projectId, taskId);
        const question = await askQuestion({ busPath, taskDir: layout.taskDir(projectId, taskId), projectId, taskId, runId: scope.runId, body: args.body, type, writers });
        if (!args.wait) return { msg_id: question.msg_id, project_id: projectId, task_id: taskId };
        const signal = (extra as { signal?: AbortSignal } | undefined)?.signal;
        const answer = await waitForAnswer(busPath, question.msg_id, { timeoutMs: timeout * 1000, signal });
        return { msg_id: question.msg_id, answer_id: answer.msg_id, answer: answer.body };
      }),
  );

  addTool<UsageArgs>(
    server,
    'usage',
    {
      title: 'Token usage and cost',
      description:
        'Token usage and cost recorded per run, summed for the project (default: the server scope), a task with its whole sub-tree (tree), per agent and per task. Tokens = input + output. ' +
        `The totals cover every run; the rows (by_agent, by_project, by_task) are paged as one list. ${PAGE_HELP}`,
      inputSchema: {
        project: z.string().optional().describe('project id (default: the server scope)'),
        task: z.string().optional().describe('task id: adds `tree` (the task and every descendant run)'),
        since: z.string().optional().describe('only runs started since this RFC 3339 time'),
        ...pageArgs,
      },
    },
    (args) =>
      toolCall(() => {
        const q = pageArgsQuery(args, isUsageCursor);
        const projectId = projectOf(scope, args.project);
        // a task-confined session reports its own task's tree unless it names another task it may see
        const taskId = args.task?.trim() ? taskOf(args.task) : scope.confine === 'task' ? scope.taskId : undefined;
        if (taskId) tasks.check(projectId, taskId);
        let since: Date | undefined;
        if (args.since?.trim()) {
          since = /^\d{4}-\d\d-\d\d/.test(args.since.trim()) ? new Date(args.since.trim()) : new Date(NaN);
          if (Number.isNaN(since.getTime())) throw new McpInputError(`since must be an RFC 3339 time, got "${args.since}"`);
        }
        return usagePage(usageReport({ layout, projectId, taskId, since }), q);
      }),
  );
}
