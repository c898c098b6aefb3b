import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { ZodTypeAny } from 'zod';
import { ANNOTATIONS, OUTPUT, type OutputShape } from './tool-schemas';

export interface ToolConfig {
  title: string;
  description: string;
  inputSchema: Record<string, ZodTypeAny>;
}

interface FullToolConfig extends ToolConfig {
  outputSchema: OutputShape;
  annotations: ToolAnnotations;
}

/**
 * McpServer.registerTool with the argument types given by the caller, and the tool's
 * outputSchema and annotations from tool-schemas.ts (a tool without them is a programming error).
 * The SDK's own generic inference over zod shapes makes tsc run out of memory (TS2589) on shapes
 * of this size.
 */
export function addTool<A>(server: McpServer, name: string, config: ToolConfig, cb: (args: A, extra: unknown) => Promise<CallToolResult>): void {
  const outputSchema = OUTPUT[name];
  const annotations = ANNOTATIONS[name];
  if (!outputSchema || !annotations) throw new Error(`tool ${name} has no outputSchema or annotations (libs/mcp/src/tool-schemas.ts)`);
  const register = server.registerTool as unknown as (this: McpServer, n: string, c: FullToolConfig, f: (args: A, extra: unknown) => Promise<CallToolResult>) => unknown;
  register.call(server, name, { ...config, outputSchema, annotations }, cb);
}
