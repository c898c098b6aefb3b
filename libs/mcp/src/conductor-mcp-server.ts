import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { registerBusTools } from './bus-tools';
import type { ConductorMcpOptions } from './mcp.types';
import { registerResources } from './resources';
import { registerTaskTools } from './task-tools';
import { TaskScope } from './tool-scope';
import { registerUsageAndAskTools } from './usage-ask-tools';

export const MCP_SERVER_NAME = 'conductor-loop';

export interface ConductorMcp {
  server: McpServer;
  /** Ends the resource subscriptions and closes the transport. */
  close(): Promise<void>;
}

/**
 * The MCP server of conductor-loop (one per connection): bus and task tools, bus and run-output
 * resources with subscriptions. The caller connects a transport (stdio in the CLI, Streamable HTTP
 * in the server).
 */
export function createConductorMcp(opts: ConductorMcpOptions): ConductorMcp {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, version: opts.version ?? '0.0.0' },
    {
      instructions:
        'conductor-loop: post to and read the message bus (bus_post, bus_read), start sub-tasks and wait for them (task_start, task_wait, task_status, task_stop), browse projects and tasks (list_projects, list_tasks), ask the task owner (ask), token usage (usage). Resources: conductor://bus/<project>[/<task>] and conductor://runs/<project>/<task>/<run>/output.',
    },
  );
  const index = opts.index;
  const parts = { layout: index.layout, writers: opts.writers };
  const tasks = new TaskScope(opts.scope, index);
  registerBusTools(server, opts.scope, opts.maxBodyBytes ?? (opts.config?.storage?.max_message_body_bytes || undefined), tasks, parts);
  registerTaskTools(server, opts, index, tasks);
  registerUsageAndAskTools(server, opts.scope, tasks, parts);
  const closeWatches = registerResources(server, tasks, index, opts.feed, opts.pollMs ?? 250);
  return {
    server,
    async close() {
      closeWatches();
      await server.close();
    },
  };
}
