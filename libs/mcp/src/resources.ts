import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { readMessages } from '@app/messagebus';
import { ChangeFeed, StorageIndex, RUN_OUTPUT_FILE } from '@app/storage';
import { busPathOf, messageJson } from './bus-tools';
import type { McpScope } from './mcp.types';
import { visibleProjects } from './task-state';
import { projectOf, type TaskScope } from './tool-scope';
import { parseResourceUri, projectBusUri, runOutputUri, taskBusUri, type ParsedUri } from './resource-uris';

/** A bus resource holds its newest messages; bus_read pages through older ones. */
export const BUS_RESOURCE_MESSAGES = 100;
const LIST_CAP = 500;

function filePathOf(index: StorageIndex, p: ParsedUri): string {
  if (p.kind === 'bus') return busPathOf(index.layout, p.projectId, p.taskId);
  return join(index.layout.runDir(p.projectId, p.taskId, p.runId), RUN_OUTPUT_FILE);
}

function parseOrThrow(uri: string): ParsedUri {
  let parsed: ParsedUri | undefined;
  try {
    parsed = parseResourceUri(uri);
  } catch (err) {
    throw new McpError(ErrorCode.InvalidParams, `${uri}: ${(err as Error).message}`);
  }
  if (!parsed) throw new McpError(ErrorCode.InvalidParams, `unknown resource ${uri}`);
  return parsed;
}

/** A resource outside a confined session is refused as the tools refuse it. */
function parseInScope(tasks: TaskScope, uri: string): ParsedUri {
  const parsed = parseOrThrow(uri);
  try {
    projectOf(tasks.scope, parsed.projectId);
    tasks.check(parsed.projectId, parsed.taskId);
  } catch (err) {
    throw new McpError(ErrorCode.InvalidParams, `${uri}: ${(err as Error).message}`);
  }
  return parsed;
}

function readResource(index: StorageIndex, tasks: TaskScope, uri: string) {
  const parsed = parseInScope(tasks, uri);
  const path = filePathOf(index, parsed);
  if (parsed.kind === 'bus') {
    const messages = existsSync(path) ? readMessages(path, { last: BUS_RESOURCE_MESSAGES }) : [];
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ messages: messages.map(messageJson) }, null, 2) }] };
  }
  if (!existsSync(path)) throw new McpError(ErrorCode.InvalidParams, `${uri}: no output yet (the run has not finished)`);
  return { contents: [{ uri, mimeType: 'text/markdown', text: readFileSync(path, 'utf8') }] };
}

function scopedProjects(index: StorageIndex, scope: McpScope): string[] {
  return scope.projectId ? [scope.projectId] : visibleProjects(index);
}

/** Project buses a session may read: none in a task-confined one. */
function scopedProjectBuses(index: StorageIndex, scope: McpScope): string[] {
  return scope.confine === 'task' ? [] : scopedProjects(index, scope);
}

/**
 * Resources: each project's and task's bus and each run's output, with subscriptions that send
 * `notifications/resources/updated` when the file changes. Returns a function closing the watches.
 */
export function registerResources(server: McpServer, tasks: TaskScope, index: StorageIndex, feed: ChangeFeed, pollMs: number): () => void {
  const scope = tasks.scope;
  const listTasks = () => scopedProjects(index, scope).flatMap((p) => tasks.tasksOf(p).map((t) => ({ p, t })));
  server.registerResource(
    'task-bus',
    new ResourceTemplate('conductor://bus/{project}/{task}', {
      list: () => ({
        resources: listTasks()
          .slice(0, LIST_CAP)
          .map(({ p, t }) => ({ uri: taskBusUri(p, t), name: `${p}/${t} bus`, mimeType: 'application/json' })),
      }),
    }),
    { title: 'Task message bus', description: `The newest ${BUS_RESOURCE_MESSAGES} messages of a task bus`, mimeType: 'application/json' },
    (uri) => readResource(index, tasks, uri.href),
  );
  server.registerResource(
    'project-bus',
    new ResourceTemplate('conductor://bus/{project}', {
      list: () => ({ resources: scopedProjectBuses(index, scope).map((p) => ({ uri: projectBusUri(p), name: `${p} project bus`, mimeType: 'application/json' })) }),
    }),
    { title: 'Project message bus', description: `The newest ${BUS_RESOURCE_MESSAGES} messages of a project bus`, mimeType: 'application/json' },
    (uri) => readResource(index, tasks, uri.href),
  );
  server.registerResource(
    'run-output',
    new ResourceTemplate('conductor://runs/{project}/{task}/{run}/output', {
      list: () => ({
        resources: listTasks()
          .flatMap(({ p, t }) => index.listRuns(p, t).map((r) => ({ uri: runOutputUri(p, t, r), name: `${t} run ${r} output`, mimeType: 'text/markdown' })))
          .slice(0, LIST_CAP),
      }),
    }),
    { title: 'Run output', description: 'output.md of a finished run', mimeType: 'text/markdown' },
    (uri) => readResource(index, tasks, uri.href),
  );

  const watches = new Map<string, () => void>();
  server.server.registerCapabilities({ resources: { subscribe: true, listChanged: true } });
  server.server.setRequestHandler(SubscribeRequestSchema, (req) => {
    const uri = req.params.uri;
    const path = filePathOf(index, parseInScope(tasks, uri));
    if (!watches.has(uri)) {
      const stop = feed.watch(path, () => void server.server.sendResourceUpdated({ uri }).catch(() => undefined), { pollMs });
      watches.set(uri, stop);
    }
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
    watches.get(req.params.uri)?.();
    watches.delete(req.params.uri);
    return {};
  });
  return () => {
    for (const stop of watches.values()) stop();
    watches.clear();
  };
}
