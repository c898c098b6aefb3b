import type { FastifyRequest } from 'fastify';

/**
 * MCP over HTTP refuses browser requests from other sites (the MCP transport rules ask servers to
 * check Origin against DNS rebinding): an Origin must be the server's own or in api.cors_origins,
 * and `Sec-Fetch-Site: cross-site` is refused. Requests without an Origin (MCP clients, curl) pass.
 */
export function isForeignOrigin(req: FastifyRequest, allowed: string[]): boolean {
  if (String(req.headers['sec-fetch-site'] ?? '').toLowerCase() === 'cross-site') return true;
  const origin = req.headers.origin;
  if (!origin) return false;
  if (allowed.includes('*') || allowed.includes(origin)) return false;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return true;
  }
  return host !== req.headers.host;
}
