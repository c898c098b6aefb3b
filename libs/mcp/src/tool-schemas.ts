import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z, type ZodTypeAny } from 'zod';
import { pageOutput } from './page-args';

/**
 * What each tool returns (its `outputSchema`; the result carries the same object as
 * `structuredContent` and as JSON text) and how a client may treat it (its annotations). The
 * read-only tools are exactly the ones that list or read; everything that writes says so.
 */
export type OutputShape = Record<string, ZodTypeAny>;

const ANY_OBJECT = z.object({}).passthrough();

const runSummary = z
  .object({
    run_id: z.string(),
    status: z.string(),
    exit_code: z.number().nullable(),
    agent: z.string(),
    parent_run_id: z.string().optional(),
    start_time: z.string().optional(),
    end_time: z.string().optional(),
    error_summary: z.string().optional(),
    output_uri: z.string().describe('conductor://runs/<project>/<task>/<run>/output'),
  })
  .passthrough();

const taskSummary: OutputShape = {
  project_id: z.string(),
  task_id: z.string(),
  state: z.enum(['pending', 'running', 'completed', 'failed', 'done']),
  finished: z.boolean(),
  done: z.boolean().describe('DONE written'),
  runs: z.array(runSummary),
  error: z.string().optional(),
};

const usageNumbers = ANY_OBJECT.describe('input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd');

export const OUTPUT: Record<string, OutputShape> = {
  bus_post: { msg_id: z.string(), bus: z.string().describe('path of the bus file') },
  bus_read: {
    project_id: z.string(),
    task_id: z.string().describe('empty for the project bus'),
    messages: z.array(ANY_OBJECT.describe('a message as `run-agent bus read --json` prints it')),
    next_since: z.string(),
    has_more: z.boolean(),
  },
  task_start: { project_id: z.string(), task_id: z.string(), run_id: z.string(), status: z.string() },
  task_status: taskSummary,
  task_wait: { ...taskSummary, timed_out: z.boolean() },
  task_stop: { project_id: z.string(), task_id: z.string(), stopped_runs: z.number().int() },
  list_projects: { projects: z.array(z.string()), ...pageOutput },
  list_tasks: {
    project_id: z.string(),
    tasks: z.array(z.object({ task_id: z.string(), state: z.string(), runs: z.number().int(), latest_run: z.string() })),
    ...pageOutput,
  },
  ask: {
    msg_id: z.string(),
    project_id: z.string().optional(),
    task_id: z.string().optional(),
    answer_id: z.string().optional().describe('with wait: the ANSWER message'),
    answer: z.string().optional(),
  },
  usage: {
    project_id: z.string().optional(),
    task_id: z.string().optional(),
    since: z.string().optional(),
    runs: z.number().int(),
    usage: usageNumbers,
    total_tokens: z.number(),
    tree: ANY_OBJECT.optional().describe('with task: the task and every descendant run'),
    by_agent: z.array(ANY_OBJECT).describe('rows of this page: agents, then projects, then tasks'),
    by_task: z.array(ANY_OBJECT),
    by_project: z.array(ANY_OBJECT),
    ...pageOutput,
  },
};

const readOnly = (title: string): ToolAnnotations => ({ title, readOnlyHint: true, openWorldHint: false });

export const ANNOTATIONS: Record<string, ToolAnnotations> = {
  bus_post: { title: 'Post to the message bus', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  bus_read: readOnly('Read the message bus'),
  // an agent run acts on its working directory and beyond: never one to approve blindly
  task_start: { title: 'Start a sub-task', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  task_status: readOnly('Task status'),
  task_wait: readOnly('Wait for a task'),
  task_stop: { title: 'Stop a task', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  list_projects: readOnly('List projects'),
  list_tasks: readOnly('List tasks'),
  ask: { title: 'Ask the task owner a question', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  usage: readOnly('Token usage and cost'),
};
