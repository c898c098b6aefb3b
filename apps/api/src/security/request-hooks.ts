import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { toEnvelope } from '../common/error.filter';
import { ApiError } from '../common/api-error';
import { hostRefusal, type HostPolicy } from './host-check';
import { MCP_RESOURCE_METADATA_PATH, PROTECTED_RESOURCE_ROUTES } from './protected-resource';
import { checkStateChange } from './state-change-guard';

export interface HookOptions {
  apiKey?: string;
  corsOrigins: string[];
  /** The Host allow-list (DNS-rebinding defence), checked before anything else. */
  hostPolicy: HostPolicy;
  /** `/metrics` open without the key (api.metrics_public). */
  metricsPublic?: boolean;
  /** True when a (decoded) path spells an API route: the static catch-all is then not public for it. */
  isApiPath?: (decodedPath: string) => boolean;
  onResponse?: (method: string, status: number) => void;
  /** Called once per answered request (the server log's `request_completed` line). */
  log?: (entry: RequestLogEntry) => void;
}

/** What the server log records of a request: never its query (an SSE `api_key` may be in it) or headers. */
export interface RequestLogEntry {
  request_id: string;
  method: string;
  path: string;
  /** The route pattern Fastify matched; absent when none did (404). */
  route?: string;
  status: number;
  duration_ms: number;
}

/**
 * Route patterns (as registered, matched by Fastify on the decoded path) that need no key: health,
 * version and the dashboard (built-in page, static files and its catch-all). Everything else,
 * including paths no route matched, needs the key: the decision never looks at the raw URL.
 */
const PUBLIC_ROUTES = new Set(['/healthz', '/api/v1/health', '/api/v1/version', '/favicon.ico', '/', '/ui', '/ui/', '/*', '/ui/*', ...PROTECTED_RESOURCE_ROUTES]);
export const isPublicRoute = (url: string): boolean => PUBLIC_ROUTES.has(url);
/**
 * Routes with their own credentials instead of the API key: an HTTP trigger checks its own bearer
 * token (libs/triggers, 401 without it), so a caller never holds the server's key; the GitHub
 * forge route checks GitHub's `X-Hub-Signature-256` against its configured secret. POST only.
 */
const OWN_AUTH_ROUTES = new Set(['/api/v1/triggers/:name', '/api/v1/forge/github']);
const SSE_ROUTE = /\/stream(\/all)?$/;
const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;
export const API_KEY_COOKIE = 'conductor_api_key';

let fallbackCounter = 0;
/** `req-<unix nanoseconds>-<12 lowercase hex>` (api.md §3.5). */
export function newRequestId(): string {
  const nanos = process.hrtime.bigint() + BigInt(Date.now()) * 1000000n;
  try {
    return `req-${nanos}-${randomBytes(6).toString('hex')}`;
  } catch {
    return `req-${nanos}-${++fallbackCounter}`;
  }
}

/** Constant-time key comparison: both sides hashed to equal-length digests first. */
export function keyMatches(candidate: string | undefined, expected: string): boolean {
  if (candidate === undefined) return false;
  const a = createHash('sha256').update(candidate).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b) && candidate.length === expected.length;
}

function pathOf(req: FastifyRequest): string {
  const raw = req.raw.url ?? req.url;
  const q = raw.indexOf('?');
  return q >= 0 ? raw.slice(0, q) : raw;
}

/** The pattern of the route Fastify matched (e.g. `/api/projects/:p`), undefined when none did (404). */
export function matchedRoute(req: FastifyRequest): string | undefined {
  return req.routeOptions?.url;
}

/** The percent-decoded path when it has no empty, `.` or `..` segment (a trailing `/` aside), else undefined. */
export function canonicalPath(rawPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return undefined;
  }
  const segments = decoded.split('/').slice(1);
  const ok = segments.every((seg, i) => (seg !== '' || i === segments.length - 1) && seg !== '.' && seg !== '..') && !decoded.includes('\\');
  return ok ? decoded : undefined;
}

/**
 * Deny by default: only the exact public route patterns (D11) and preflights go without a key. A
 * wildcard route (the static UI) matches any spelling: it is public only for a canonical path that
 * does not spell an API route (`/ui/../api/…`, `/API/v1/…`, `/api/projects/` need the key).
 */
export function isAuthExempt(method: string, route: string | undefined, rawPath: string, opts: Pick<HookOptions, 'metricsPublic' | 'isApiPath'> = {}): boolean {
  if (method === 'OPTIONS') return true;
  if (route === undefined) return false;
  if (route.includes('*')) {
    const decoded = canonicalPath(rawPath);
    if (decoded === undefined || /^\/api(\/|$)/i.test(decoded) || opts.isApiPath?.(decoded)) return false;
  }
  if (method === 'POST' && OWN_AUTH_ROUTES.has(route)) return true;
  return PUBLIC_ROUTES.has(route) || (!!opts.metricsPublic && route === '/metrics');
}

function presentedKey(req: FastifyRequest, route: string | undefined): string | undefined {
  const auth = req.headers.authorization;
  const bearer = typeof auth === 'string' ? BEARER.exec(auth) : null;
  if (bearer) return bearer[1];
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header !== '') return header;
  if (req.method === 'GET' && route !== undefined && SSE_ROUTE.test(route)) {
    const query = (req.query ?? {}) as Record<string, unknown>;
    if (typeof query.api_key === 'string') return query.api_key;
    const cookie = cookieValue(req.headers.cookie, API_KEY_COOKIE);
    if (cookie !== undefined) return cookie;
  }
  return undefined;
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

function applyCors(req: FastifyRequest, reply: FastifyReply, origins: string[]): void {
  const origin = req.headers.origin;
  if (!origin || origins.length === 0) return;
  const wildcard = origins.includes('*');
  if (!wildcard && !origins.includes(origin)) return;
  reply.header('Access-Control-Allow-Origin', wildcard ? '*' : origin);
  reply.header('Vary', 'Origin');
  reply.header('Access-Control-Allow-Methods', 'GET,POST,DELETE,OPTIONS');
  reply.header('Access-Control-Allow-Headers', 'Content-Type, Authorization, X-Request-ID, X-Conductor-Client');
  reply.header('Access-Control-Expose-Headers', 'X-Request-ID');
}

function sendError(reply: FastifyReply, err: unknown): void {
  const { status, body } = toEnvelope(err);
  void reply.code(status).header('Content-Type', 'application/json').send(body);
}

/** `WWW-Authenticate` of a 401: on `/mcp` it names the protected-resource metadata (RFC 9728, MCP authorization). */
function authenticateHeader(req: FastifyRequest, route: string | undefined): string {
  if (route !== '/mcp') return 'Bearer realm="conductor"';
  return `Bearer realm="conductor", resource_metadata="http://${req.headers.host}${MCP_RESOURCE_METADATA_PATH}"`;
}

/**
 * The outer request pipeline (api.md §0): request id, request counting, framing headers, the Host
 * allow-list (DNS rebinding, issue #29), CORS (every OPTIONS → 204), the optional API key check
 * (§3.1 + D11) on the matched route, then the cross-site guard for state-changing requests. Runs
 * for every path, including static files and 404s.
 */
export function installRequestHooks(fastify: FastifyInstance, opts: HookOptions): void {
  fastify.addHook('onRequest', (req, reply, done) => {
    const incoming = String(req.headers['x-request-id'] ?? '').trim();
    const requestId = incoming || newRequestId();
    (req as any).requestId = requestId;
    reply.header('X-Request-ID', requestId);
    const started = process.hrtime.bigint();
    reply.raw.once('close', () => {
      const status = reply.raw.statusCode || 200;
      opts.onResponse?.(req.method, status);
      const duration = Number(process.hrtime.bigint() - started) / 1e6;
      opts.log?.({ request_id: requestId, method: req.method, path: pathOf(req), route: matchedRoute(req), status, duration_ms: Math.round(duration * 1000) / 1000 });
    });
    // no page of another site may frame the dashboard (clickjacking)
    reply.header('X-Frame-Options', 'DENY');
    reply.header('Content-Security-Policy', "frame-ancestors 'none'");
    const refusal = hostRefusal(req, opts.hostPolicy);
    if (refusal !== undefined) {
      sendError(reply, new ApiError('FORBIDDEN', refusal));
      return;
    }
    applyCors(req, reply, opts.corsOrigins);
    if (req.method === 'OPTIONS') {
      void reply.code(204).send();
      return;
    }
    const route = matchedRoute(req);
    if (opts.apiKey && !isAuthExempt(req.method, route, pathOf(req), opts) && !keyMatches(presentedKey(req, route), opts.apiKey)) {
      void reply
        .code(401)
        .header('WWW-Authenticate', authenticateHeader(req, route))
        .header('Content-Type', 'application/json')
        .send({ error: 'unauthorized', message: 'valid API key required' });
      return;
    }
    try {
      checkStateChange(req, opts.corsOrigins, opts.hostPolicy);
    } catch (err) {
      sendError(reply, err);
      return;
    }
    done();
  });
}
