import { existsSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { BusMessage, createProjectBusFolder, readMessages } from '@app/messagebus';
import type { RunsLayout } from '@app/storage';
import type { McpBusParts, McpScope } from './mcp.types';
import { addTool } from './register-tool';
import { busTaskOf, projectOf, type TaskScope } from './tool-scope';
import { McpInputError, toolCall } from './tool-result';

export type BusGuard = (projectId: string, taskId: string | undefined) => void;

export const BUS_READ_DEFAULT_LIMIT = 20;
export const BUS_READ_MAX_LIMIT = 500;

/** A bus message as the tools and resources return it (the JSON of `run-agent bus read --json`). */
export function messageJson(m: BusMessage): Record<string, unknown> {
  return { ...m, ts: m.ts.toISOString() };
}

/** Bus file of a project, or of one of its tasks. */
export function busPathOf(layout: RunsLayout, projectId: string, taskId?: string): string {
  return taskId ? layout.taskBus(projectId, taskId) : layout.projectBus(projectId);
}

export interface PostInput {
  type: string;
  body: string;
  project?: string;
  task?: string;
  parents?: string[];
}

/**
 * `bus_post`: the message `run-agent bus post --type T --body B [--project P] [--task T] [--parent
 * id]…` writes from the same scope, through the same writer (BusWriter, which applies the
 * format's own checks: type, body size).
 */
/** `guard`: refuses a bus outside a confined session (TaskScope.check). */
export async function postMessage(scope: McpScope, parts: McpBusParts, input: PostInput, maxBodyBytes?: number, guard?: BusGuard): Promise<{ msg_id: string; bus: string }> {
  const { layout } = parts;
  const projectId = projectOf(scope, input.project);
  const taskId = busTaskOf(scope, projectId, input.task);
  guard?.(projectId, taskId);
  if (input.type.trim() === '') throw new McpInputError('type must not be empty');
  const parents = input.parents ?? [];
  if (parents.some((p) => p.trim() === '')) throw new McpInputError('parents must not contain an empty msg_id');
  const bus = busPathOf(layout, projectId, taskId);
  // as `run-agent bus post --project P`: a project's bus creates its folder, a task's needs the task
  const created = !taskId && !existsSync(dirname(bus));
  if (created) createProjectBusFolder(bus);
  const writer = parts.writers(bus, maxBodyBytes === undefined ? {} : { maxBodyBytes });
  try {
    const msg = await writer.append({
      type: input.type,
      project_id: projectId,
      task_id: taskId ?? '',
      run_id: scope.runId ?? '',
      body: input.body,
      parents: parents.map((id) => ({ msg_id: id.trim() })),
      links: [],
    });
    return { msg_id: msg.msg_id, bus };
  } catch (err) {
    // a refused message (body too large, …) leaves nothing behind, not even the new folder
    if (created) rmSync(dirname(bus), { recursive: true, force: true });
    throw err;
  } finally {
    writer.close();
  }
}

export interface ReadInput {
  project?: string;
  task?: string;
  since?: string;
  limit?: number;
}

/**
 * `bus_read`: without `since` the newest `limit` messages; with `since` the first `limit` after
 * it, and `has_more` when more follow (call again with `since: next_since`).
 */
export function readBus(scope: McpScope, layout: RunsLayout, input: ReadInput, guard?: BusGuard) {
  const projectId = projectOf(scope, input.project);
  const taskId = busTaskOf(scope, projectId, input.task);
  guard?.(projectId, taskId);
  const limit = input.limit ?? BUS_READ_DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > BUS_READ_MAX_LIMIT) {
    throw new McpInputError(`invalid limit ${limit}: must be an integer from 1 to ${BUS_READ_MAX_LIMIT}`);
  }
  const since = input.since?.trim() || undefined;
  const bus = busPathOf(layout, projectId, taskId);
  let messages: BusMessage[] = [];
  let hasMore = false;
  if (!existsSync(bus)) {
    if (since) throw new McpInputError('message id not found');
  } else if (since) {
    const after = readMessages(bus, { sinceId: since });
    messages = after.slice(0, limit);
    hasMore = after.length > limit;
  } else {
    messages = readMessages(bus, { last: limit });
  }
  return {
    project_id: projectId,
    task_id: taskId ?? '',
    messages: messages.map(messageJson),
    next_since: messages.at(-1)?.msg_id ?? since ?? '',
    has_more: hasMore,
  };
}


const postShape = {
  type: z.string().describe('message type: FACT, PROGRESS, DECISION, ERROR, QUESTION, INFO, …'),
  body: z.string().describe('message body (max 64 KiB)'),
  task: z.string().optional().describe('post to this task of the project instead'),
  project: z.string().optional().describe('project id (needed when the server has no project scope)'),
  parents: z.array(z.string()).optional().describe('msg_ids this message answers or continues'),
};

const readShape = {
  since: z.string().optional().describe('return messages after this msg_id'),
  limit: z.number().int().optional().describe(`how many messages (1-${BUS_READ_MAX_LIMIT}, default ${BUS_READ_DEFAULT_LIMIT})`),
  task: z.string().optional().describe('read this task bus of the project instead'),
  project: z.string().optional().describe('project id (needed when the server has no project scope)'),
};

/** `maxBodyBytes`: the body limit of `run-agent bus post` (default: the format's, 16 MiB). */
export function registerBusTools(server: McpServer, scope: McpScope, maxBodyBytes: number | undefined, tasks: TaskScope, parts: McpBusParts): void {
  const guard: BusGuard = (p, t) => tasks.check(p, t);
  addTool<PostInput>(
    server,
    'bus_post',
    {
      title: 'Post to the message bus',
      description:
        'Append a message to the scoped message bus (the task bus when the server is scoped to a task, else the project bus), exactly as `run-agent bus post` does. Returns its msg_id.',
      inputSchema: postShape,
    },
    (args) => toolCall(() => postMessage(scope, parts, args, maxBodyBytes, guard)),
  );
  addTool<ReadInput>(
    server,
    'bus_read',
    {
      title: 'Read the message bus',
      description:
        'Messages of the scoped bus: the newest `limit` (default 20), or with `since` the ones after that msg_id, oldest first; page on with `since: next_since` while `has_more`.',
      inputSchema: readShape,
    },
    (args) => toolCall(() => readBus(scope, parts.layout, args, guard)),
  );
}
