import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) for `/mcp`, as the MCP authorization spec asks
 * of an HTTP server that requires a token: a standard MCP client that gets a 401 reads the
 * `resource_metadata` URL of `WWW-Authenticate`, learns that `/mcp` takes a bearer token in the
 * `Authorization` header and that no authorization server issues it (the token is the API key),
 * instead of trying an OAuth flow. Public (the key is what it describes), Host-checked like every route.
 */
export const MCP_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';
/** The path-suffixed form (RFC 9728 §3.1) and the bare one clients fall back to. */
export const PROTECTED_RESOURCE_ROUTES = [MCP_RESOURCE_METADATA_PATH, '/.well-known/oauth-protected-resource'] as const;

export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  bearer_methods_supported: string[];
  resource_name: string;
}

/** The document for the host the request named (already checked against the allow-list). */
export function protectedResourceMetadata(req: FastifyRequest): ProtectedResourceMetadata {
  return {
    resource: `http://${req.headers.host}/mcp`,
    authorization_servers: [],
    bearer_methods_supported: ['header'],
    resource_name: 'conductor MCP server (bearer token = the server API key)',
  };
}

export function registerProtectedResourceMetadata(fastify: FastifyInstance): void {
  for (const route of PROTECTED_RESOURCE_ROUTES) {
    fastify.get(route, (req, reply) => reply.header('Cache-Control', 'no-store').type('application/json').send(protectedResourceMetadata(req)));
  }
}
