import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * The OpenAPI traffic check (#30): every request the API e2e tests send to a test server
 * (`createApiApp` / `listenApiApp` in test/utils/api-app.ts, app.inject and real sockets alike) and
 * its answer are validated against docs/openapi.json with Prism's own validators
 * (@stoplight/prism-http: the ones `prism proxy --errors` runs), on the operation the router matched.
 *
 * A mismatch is an error of the test file that caused it (test/utils/openapi-traffic-setup.ts fails
 * the file in afterAll):
 * - an answer whose status the operation does not document, whose content type is not the
 *   documented one, or whose body or headers do not validate;
 * - a request the document rejects (parameters, body) that the server accepted (status < 400);
 * - a route under /api/, /mcp or /metrics that the document does not list at all.
 * With OPENAPI_TRAFFIC_LOG=<file> each exchange is appended to that file as one JSON line.
 */

const DOC = join(__dirname, '..', '..', 'docs', 'openapi.json');

/** Routes the document describes: the REST API, MCP and metrics (static UI files are not part of it). */
const DOCUMENTED_FAMILY = /^\/(api\/|mcp$|metrics$|healthz$)/;

/** The dashboard's static-file route: it also answers (401, 404) paths under /api/ that no API route matched. */
const STATIC_CATCH_ALL = '/*';

export interface Exchange {
  method: string;
  route: string;
  url: string;
  status: number;
  contentType?: string;
  problems: string[];
}

/** Mismatches found in this test file (jest gives every test file its own module registry). */
export const openApiMismatches: Exchange[] = [];
let validated = 0;
export const validatedExchanges = () => validated;

interface Operation {
  method: string;
  path: string;
  [k: string]: unknown;
}

type Prism = typeof import('@stoplight/prism-http/dist/validator');
let loaded: Promise<{ ops: Map<string, Operation>; prism: Prism }> | undefined;

/** `/api/v1/tasks/:id` and `/api/v1/tasks/{id}` both read `GET /api/v1/tasks/{}`. */
const key = (method: string, path: string) => `${method.toUpperCase()} ${path.replace(/:[^/]+|\{[^}]+\}/g, '{}')}`;

/** Prism's own reading of a document (its index pulls in the mocker's ES-module faker: these two do not). */
async function operations(doc: string | object): Promise<{ ops: Map<string, Operation>; prism: Prism }> {
  const { getHttpOperationsFromSpec } = await import('@stoplight/prism-http/dist/utils/operations');
  const prism = await import('@stoplight/prism-http/dist/validator');
  const ops = new Map<string, Operation>();
  for (const op of (await getHttpOperationsFromSpec(doc)) as unknown as Operation[]) ops.set(key(op.method, op.path), op);
  return { ops, prism };
}

function load(): Promise<{ ops: Map<string, Operation>; prism: Prism }> {
  loaded ??= operations(DOC);
  return loaded;
}

/** Validate against another document from now on (the planted-mismatch test uses an edited copy). */
export function useDocument(doc: object): void {
  loaded = operations(doc);
}

/** Prism's diagnostics of severity Error (0), as one line each. */
function errors(result: { _tag: string; left?: Array<{ severity: number; message: string; path?: Array<string | number> }> }, bodyUnseen = false): string[] {
  if (result._tag !== 'Left' || !result.left) return [];
  return result.left
    .filter((d) => d.severity === 0 && !(bodyUnseen && (d.path?.[0] === 'body' || /^Response body/.test(d.message))))
    .map((d) => `${d.path?.length ? d.path.join('.') + ': ' : ''}${d.message}`);
}

function bodyOf(payload: unknown, contentType: string | undefined): unknown {
  if (payload === null) return ''; // a hijacked reply streamed its body itself
  if (payload === undefined) return undefined;
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return ''; // a stream (SSE, a file): status and type only
  const text = payload.toString();
  if (contentType && /json/.test(contentType) && text !== '') {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

const stringHeaders = (h: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(', ') : String(v)]));

async function check(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<void> {
  const route = req.routeOptions?.url;
  const path = req.url.split('?')[0];
  if (!route || route === STATIC_CATCH_ALL || !DOCUMENTED_FAMILY.test(path)) return;
  const { ops, prism } = await load();
  const status = reply.statusCode;
  const headers = stringHeaders(reply.getHeaders());
  const contentType = headers['content-type'];
  const exchange: Exchange = { method: req.method, route, url: req.url, status, contentType, problems: [] };
  const op = ops.get(key(req.method, route));
  if (!op) {
    if (req.method !== 'OPTIONS' && req.method !== 'HEAD') exchange.problems.push(`route ${key(req.method, route)} is not in docs/openapi.json`);
  } else {
    const query = Object.fromEntries(new URL(req.url, 'http://x').searchParams);
    const input = errors(
      prism.validateInput({
        resource: op as never,
        element: { method: req.method.toLowerCase() as never, url: { path, query }, headers: stringHeaders(req.headers), body: req.body },
      }) as never,
    );
    if (input.length && status < 400) exchange.problems.push(...input.map((p) => `request the document rejects was accepted: ${p}`));
    // a hijacked reply (payload null) wrote its body itself: its status and headers are checked, not its body
    const output = errors(
      prism.validateOutput({ resource: op as never, element: { statusCode: status, headers, body: bodyOf(payload, contentType) } }) as never,
      payload === null,
    );
    exchange.problems.push(...output.map((p) => `response: ${p}`));
    const documented = (op.responses as Array<{ code: string }>).map((r) => r.code);
    if (!documented.includes(String(status)) && !documented.includes(`${String(status)[0]}XX`) && !documented.includes('default') && !output.length)
      exchange.problems.push(`response: status ${status} is not documented (${documented.join(',')})`);
  }
  validated++;
  if (exchange.problems.length) openApiMismatches.push(exchange);
  if (process.env.OPENAPI_TRAFFIC_LOG) appendFileSync(process.env.OPENAPI_TRAFFIC_LOG, JSON.stringify({ file: expect.getState().testPath, ...exchange, op: op ? key(op.method, op.path) : undefined }) + '\n');
}

const pending = new Set<Promise<void>>();
function track(p: Promise<void>): void {
  pending.add(p);
  void p.finally(() => pending.delete(p));
}

/** Waits for the checks of every answer sent so far. */
export async function settleOpenApiChecks(): Promise<void> {
  while (pending.size) await Promise.all([...pending]);
}

/** The check itself failed: that is a mismatch too (never a silent pass). */
function failed(req: FastifyRequest, err: Error): void {
  openApiMismatches.push({ method: req.method, route: req.routeOptions?.url ?? '', url: req.url, status: 0, problems: [`the check failed: ${err.stack ?? err.message}`] });
}

/** Adds the check to a server before it is ready (ServerOptions.beforeReady). */
export function checkOpenApiTraffic(fastify: FastifyInstance): void {
  const seen = new WeakSet<FastifyRequest>();
  // the answer is not held back for the check (a delayed 4xx raced a client's keep-alive reuse): the
  // checks run beside it and the setup file's afterAll waits for them (settleOpenApiChecks)
  fastify.addHook('onSend', (req, reply, payload, done) => {
    seen.add(req);
    track(check(req, reply, payload).catch((err: Error) => failed(req, err)));
    done(null, payload);
  });
  // a hijacked reply (SSE, MCP's streams) skips onSend: its status and the headers it wrote are checked when it ends
  fastify.addHook('onRequest', (req, reply, done) => {
    const raw = reply.raw;
    let written: Record<string, unknown> = {};
    const writeHead = raw.writeHead.bind(raw) as (...args: unknown[]) => typeof raw;
    raw.writeHead = ((...args: unknown[]) => {
      const h = args.find((a, i) => i > 0 && typeof a === 'object' && a !== null && !Array.isArray(a));
      if (h) written = h as Record<string, unknown>;
      return writeHead(...args);
    }) as typeof raw.writeHead;
    raw.once('finish', () => {
      if (seen.has(req)) return;
      const getHeaders = () => ({ ...raw.getHeaders(), ...written });
      track(check(req, { statusCode: raw.statusCode, getHeaders } as unknown as FastifyReply, null).catch((err: Error) => failed(req, err)));
    });
    done();
  });
}

/** One readable block per mismatch, for the failing afterAll. */
export function describeMismatches(list: Exchange[]): string {
  return list.map((e) => `${e.method} ${e.url} (route ${e.route}) → ${e.status} ${e.contentType ?? ''}\n  ${e.problems.join('\n  ')}`).join('\n');
}
