// Everything /mcp needs from the MCP SDK (with zod, ajv and hono: ~230 modules). McpSessions
// requires this file on the first /mcp request, so a server nobody asks for MCP never loads it.
export { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
export { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
export { createConductorMcp } from '@app/mcp';
