import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** A tool result carrying one JSON document (as text, which every MCP client shows). */
export function jsonResult(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] };
}

/** An MCP tool error (`isError: true`) whose text is the same reason the CLI and API give. */
export function errorResult(err: unknown): CallToolResult {
  const message = err instanceof Error ? err.message : String(err);
  return { content: [{ type: 'text', text: message }], isError: true };
}

/** Runs a tool body and turns any thrown error into a tool error. */
export async function toolCall(fn: () => unknown | Promise<unknown>): Promise<CallToolResult> {
  try {
    return jsonResult(await fn());
  } catch (err) {
    return errorResult(err);
  }
}

/** Bad tool input: reported as a tool error with this message. */
export class McpInputError extends Error {
  override readonly name = 'McpInputError';
}
