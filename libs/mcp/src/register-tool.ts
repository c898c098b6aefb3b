import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ZodTypeAny } from 'zod';

export interface ToolConfig {
  title: string;
  description: string;
  inputSchema: Record<string, ZodTypeAny>;
}

/**
 * McpServer.registerTool with the argument types given by the caller. The SDK's own generic
 * inference over zod shapes makes tsc run out of memory (TS2589) on shapes of this size.
 */
export function addTool<A>(server: McpServer, name: string, config: ToolConfig, cb: (args: A, extra: unknown) => Promise<CallToolResult>): void {
  const register = server.registerTool as unknown as (this: McpServer, n: string, c: ToolConfig, f: (args: A, extra: unknown) => Promise<CallToolResult>) => unknown;
  register.call(server, name, config, cb);
}
