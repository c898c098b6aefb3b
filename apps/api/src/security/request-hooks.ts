import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export interface HookOptions {
  apiKey?: string;
  corsOrigins: string[];
  onResponse?: (method: string, status: number) => void;
  /** One `request_completed` line per request (server mode with logging on). */
  log?: (line: string) => void;
}

const EXEMPT_PATHS = new Set(['/api/v1/health', '/api/v1/version', '/metrics', '/healthz']);
const SSE_PATH = /\/stream(\/all)?$/;
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

/** Static UI assets and the health/version/metrics endpoints need no key (D11); everything under /api/ and /mcp does. */
export function isAuthExempt(method: string, urlPath: string): boolean {
  if (method === 'OPTIONS') return true;
  if (EXEMPT_PATHS.has(urlPath)) return true;
  if (urlPath === '/mcp' || urlPath.startsWith('/mcp/')) return false;
  return !urlPath.startsWith('/api/') && urlPath !== '/api';
}

function presentedKey(req: FastifyRequest, urlPath: string): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && auth.startsWith('Bearer ')) return auth.slice('Bearer '.length);
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header !== '') return header;
  if (req.method === 'GET' && SSE_PATH.test(urlPath)) {
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

/**
 * The outer request pipeline (api.md §0): request id, request counting, CORS (every OPTIONS → 204),
 * then the optional API key check (§3.1 + D11). Runs for every path, including static files and 404s.
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
      opts.log?.(
        JSON.stringify({ msg: 'request_completed', request_id: requestId, method: req.method, path: pathOf(req), status, duration_ms: Number(process.hrtime.bigint() - started) / 1e6 }),
      );
    });
    applyCors(req, reply, opts.corsOrigins);
    if (req.method === 'OPTIONS') {
      void reply.code(204).send();
      return;
    }
    const urlPath = pathOf(req);
    if (opts.apiKey && !isAuthExempt(req.method, urlPath) && !keyMatches(presentedKey(req, urlPath), opts.apiKey)) {
      void reply
        .code(401)
        .header('WWW-Authenticate', 'Bearer realm="conductor"')
        .header('Content-Type', 'application/json')
        .send({ error: 'unauthorized', message: 'valid API key required' });
      return;
    }
    done();
  });
}
