import type { FastifyRequest } from 'fastify';
import { ApiError } from '../common/api-error';
import { localPortOf, originHostAllowed, type HostPolicy } from './host-check';

/**
 * Cross-site request guard for every state-changing request (any method but GET/HEAD/OPTIONS, on
 * any route, present or future), with or without an API key:
 * - a body must be `application/json`: a browser sends a cross-site form or `text/plain` POST
 *   without a CORS preflight, but never a JSON one;
 * - `Sec-Fetch-Site: cross-site` is refused;
 * - an `Origin` must name an allowed host (host-check.ts: loopback on this port, api.allowed_hosts)
 *   or be listed in `api.cors_origins` (`*` does not count). CLI clients send no Origin.
 *   (With --allow-any-host, the Origin must name the same host as the request's `Host`.)
 */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function header(req: FastifyRequest, name: string): string {
  const v = req.headers[name];
  return (Array.isArray(v) ? v.join(',') : (v ?? '')).trim();
}

function hasBody(req: FastifyRequest): boolean {
  const length = header(req, 'content-length');
  return header(req, 'transfer-encoding') !== '' || (length !== '' && length !== '0');
}

/** `application/json`, optionally with parameters (`; charset=utf-8`). */
export function isJsonContentType(value: string): boolean {
  return value.split(';')[0].trim().toLowerCase() === 'application/json';
}

function originAllowed(req: FastifyRequest, origin: string, allowList: string[], hostPolicy: HostPolicy | undefined): boolean {
  if (allowList.includes(origin)) return true;
  if (hostPolicy && !hostPolicy.anyHost) return originHostAllowed(origin, hostPolicy, localPortOf(req));
  const host = header(req, 'host');
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // `null` (sandboxed frames, file://) and garbage
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  return host !== '' && url.host.toLowerCase() === host.toLowerCase();
}

/**
 * Throws ApiError (403) when the request comes from a foreign web page: `Sec-Fetch-Site: cross-site`
 * or an Origin that is not this server nor allow-listed. `/mcp` applies it to every method (the MCP
 * transport rules ask for an Origin check against DNS rebinding, reads included).
 */
export function checkCrossSite(req: FastifyRequest, allowedOrigins: string[], hostPolicy?: HostPolicy): void {
  if (header(req, 'sec-fetch-site').toLowerCase() === 'cross-site') throw new ApiError('FORBIDDEN', 'cross-site request refused');
  const origin = header(req, 'origin');
  if (origin !== '' && !originAllowed(req, origin, allowedOrigins.filter((o) => o !== '*'), hostPolicy)) {
    throw new ApiError('FORBIDDEN', `cross-origin request refused: origin ${JSON.stringify(origin.slice(0, 100))} is not this server (allow it with api.cors_origins or api.allowed_hosts)`);
  }
}

/** Throws ApiError (415 / 403) when a state-changing request may come from a foreign web page. */
export function checkStateChange(req: FastifyRequest, allowedOrigins: string[], hostPolicy?: HostPolicy): void {
  if (SAFE_METHODS.has(req.method)) return;
  const contentType = header(req, 'content-type');
  if ((contentType !== '' || hasBody(req)) && !isJsonContentType(contentType)) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `unsupported content type ${JSON.stringify(contentType || '(none)')}: state-changing requests take application/json`);
  }
  checkCrossSite(req, allowedOrigins, hostPolicy);
}
