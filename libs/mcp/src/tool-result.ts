import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/**
 * A tool result carrying one JSON document: as `structuredContent` (checked against the tool's
 * outputSchema) and as text, which every MCP client shows (the spec's advice for compatibility).
 */
export function jsonResult(value: unknown): CallToolResult {
  const json = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
  return { content: [{ type: 'text', text: JSON.stringify(json, null, 2) }], structuredContent: json };
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
