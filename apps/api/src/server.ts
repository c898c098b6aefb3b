// first: trims what NestJS and class-validator load at start-up (boot/lean-load.ts)
import './boot/lean-server';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { AppConfig, DEFAULT_API_HOST, DEFAULT_API_PORT, loadConfig, type LogLevel, RunsLayout } from '@app/storage';
import { createScaleoutServer, type NatsAuth } from '@app/scaleout';
import { ApiModule } from './api.module';
import { API_CONTEXT, ApiContext, ApiSettings, SseSettings, sseSettings } from './common/api-context';
import { ErrorEnvelopeFilter } from './common/error.filter';
import { ApiValidationPipe } from './common/validation.pipe';
import { rememberRouteTable, RouteTable } from './common/route-table';
import { installJsonBodyParser } from './common/json-body';
import { JsonLogger } from './common/json-logger';
import { MetricsService } from './metrics/metrics.service';
import { installRequestHooks, isPublicRoute, type RequestLogEntry } from './security/request-hooks';
import { buildHostPolicy, exposureRefusal, isLoopbackHost } from './security/host-check';
import { registerProtectedResourceMetadata } from './security/protected-resource';
import { findUiDir, packageRoot, registerStaticUi } from './static/static-ui';
import { lazySchemaCompilers } from './boot/schema-compilers';

export interface ServerOptions {
  root: string;
  config?: AppConfig;
  configPath?: string;
  host?: string;
  port?: number;
  portExplicit?: boolean;
  apiKey?: string;
  disableTaskStart?: boolean;
  /** Allow a non-loopback host without an API key (the CLI's --insecure-no-auth). */
  insecureNoAuth?: boolean;
  /** Host names answered besides loopback (`--allowed-host`, added to config api.allowed_hosts). */
  allowedHosts?: string[];
  /** No Host check at all (`--allow-any-host`). */
  allowAnyHost?: boolean;
  uiDir?: string;
  /** Nest's console logger (apps/api/src/main.ts); `logLevel` takes precedence. */
  logger?: boolean;
  /** The structured server log (JSON lines on stderr, docs/operations.md) at this level; none when unset. */
  logLevel?: LogLevel;
  /** SSE tuning overrides (tests use short intervals); defaults come from api.sse.* of the config. */
  sse?: Partial<SseSettings>;
  /** Process metrics in /metrics (default: on, except under NODE_ENV=test). */
  defaultMetrics?: boolean;
  /** Grace period between SIGTERM and SIGKILL of stop actions (default 30 s, D6). */
  stopGraceMs?: number;
  /** Largest request body in bytes (default: config api.max_request_body_bytes, else 1 MiB). */
  maxRequestBodyBytes?: number;
  /** NATS URL: dispatch tasks to `run-agent worker` hosts and keep this root as their replica. */
  nats?: string;
  /** NATS credentials and TLS (`--nats-token`, `--nats-creds`, `--nats-tls-ca`, …). */
  natsAuth?: NatsAuth;
  /** Tests: extra Fastify hooks, added before the server is ready (test/utils/openapi-traffic.ts). */
  beforeReady?: (fastify: FastifyInstance) => void;
}

export const DEFAULT_HOST = DEFAULT_API_HOST;
export const DEFAULT_PORT = DEFAULT_API_PORT;
/** Default request-body limit; config api.max_request_body_bytes or ServerOptions.maxRequestBodyBytes change it. */
export const BODY_LIMIT_BYTES = 1 << 20;
const PORT_RANGE = 100;

/** The package version (package.json), or `dev`. */
export function serverVersion(): string {
  const root = packageRoot();
  try {
    return root ? (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version ?? 'dev') : 'dev';
  } catch {
    return 'dev';
  }
}

/** Fail closed: a config that cannot be loaded throws (StorageError INVALID_CONFIG), never defaults. */
function loadServerConfig(opts: ServerOptions): AppConfig | undefined {
  if (opts.config) return opts.config;
  if (!opts.configPath) return undefined;
  return loadConfig(opts.configPath, { strict: false, serverSecrets: true });
}

function bindHostOf(opts: ServerOptions, config: AppConfig | undefined): string {
  return opts.host ?? config?.api?.host ?? DEFAULT_HOST;
}

function configuredHosts(opts: ServerOptions, config: AppConfig | undefined): string[] {
  return [...(config?.api?.allowed_hosts ?? []), ...(opts.allowedHosts ?? [])];
}

function buildContext(opts: ServerOptions, config: AppConfig | undefined): ApiSettings {
  const layout = new RunsLayout(path.resolve(opts.root));
  const configKey = config?.api?.auth_enabled && config.api.api_key ? config.api.api_key : undefined;
  return {
    root: layout.root,
    layout,
    config,
    apiKey: opts.apiKey || configKey || undefined,
    disableTaskStart: !!opts.disableTaskStart,
    corsOrigins: config?.api?.cors_origins ?? [],
    hostPolicy: buildHostPolicy(bindHostOf(opts, config), configuredHosts(opts, config), !!opts.allowAnyHost),
    sse: sseSettings(config, opts.sse),
    startedAt: Date.now(),
    version: serverVersion(),
    stopGraceMs: opts.stopGraceMs,
  };
}

/** Probes and scrapes that answer every few seconds: their successful requests are logged at debug. */
const PROBE_ROUTES = new Set(['/healthz', '/api/v1/health', '/metrics']);

/** `request_completed`: error for 5xx, debug for a successful probe, info for the rest. */
function logRequest(logger: Logger, entry: RequestLogEntry): void {
  const line = { msg: 'request_completed', ...entry };
  if (entry.status >= 500) logger.error(line);
  else if (entry.status < 400 && entry.route !== undefined && PROBE_ROUTES.has(entry.route)) logger.debug(line);
  else logger.log(line);
}

/** Shared by the server and tests: pipes, filter, request hooks (id, CORS, auth, counting), error handler. */
export function configureApp(app: NestFastifyApplication, ctx: ApiSettings, uiDir: string | undefined, logRequests = false): string {
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  app.useGlobalPipes(new ApiValidationPipe());
  const routes = new RouteTable();
  fastify.addHook('onRoute', (route) => routes.add(route.method, route.url));
  rememberRouteTable(app, routes);
  installJsonBodyParser(fastify);
  app.useGlobalFilters(new ErrorEnvelopeFilter(routes));
  const metrics = app.get(MetricsService);
  const requestLogger = new Logger('http');
  installRequestHooks(fastify, {
    apiKey: ctx.apiKey,
    corsOrigins: ctx.corsOrigins,
    hostPolicy: ctx.hostPolicy,
    metricsPublic: !!ctx.config?.api?.metrics_public,
    isApiPath: (p) => routes.matchesAnyIgnoringCase(p, isPublicRoute),
    onResponse: (m, s) => metrics.countRequest(m, s),
    log: logRequests ? (entry) => logRequest(requestLogger, entry) : undefined,
  });
  registerProtectedResourceMetadata(fastify);
  return registerStaticUi(app, uiDir);
}

/** The settings ApiModule.forRoot takes, resolved from server options (tests build their own modules with it). */
export function buildApiContext(opts: ServerOptions): ApiSettings {
  return buildContext(opts, loadServerConfig(opts));
}

/** Longest path parameter the router matches: beyond any request line Node accepts (16 KiB headers). */
const ROUTER_MAX_PARAM_LENGTH = 16 * 1024;

/** Builds and configures the server without listening (tests use app.inject or listen(0)). */
export async function createApiApp(opts: ServerOptions): Promise<NestFastifyApplication> {
  // before anything logs: the config warning below goes through it too
  const jsonLogger = opts.logLevel ? new JsonLogger(opts.logLevel) : undefined;
  if (jsonLogger) Logger.overrideLogger(jsonLogger);
  const config = loadServerConfig(opts);
  const ctx = buildContext(opts, config);
  if (opts.nats) {
    ctx.scaleout = createScaleoutServer(opts.nats, ctx.root, { auth: opts.natsAuth, log: (line) => new Logger('scaleout').warn(line) });
    await ctx.scaleout.start();
  }
  // Fastify's own forceCloseConnections (Nest's option of that name does not reach Fastify): close()
  // destroys every socket, open SSE streams and half-aborted requests included.
  const bodyLimit = opts.maxRequestBodyBytes || config?.api?.max_request_body_bytes || BODY_LIMIT_BYTES;
  // maxParamLength: the router matches an id of any length (Fastify's default, 100, made ids of
  // 101–128 characters unroutable), so the one id rule (MAX_ID_LENGTH, @app/storage) answers 400
  // for an over-long one; Node's header limit (16 KiB) bounds a request line anyway.
  const adapter = new FastifyAdapter({
    bodyLimit,
    forceCloseConnections: true,
    routerOptions: { maxParamLength: ROUTER_MAX_PARAM_LENGTH },
    schemaController: { compilersFactory: lazySchemaCompilers() },
  });
  const app = await NestFactory.create<NestFastifyApplication>(ApiModule.forRoot(ctx, { defaultMetrics: opts.defaultMetrics }), adapter, {
    logger: jsonLogger ?? (opts.logger ? ['log', 'error', 'warn'] : false),
    // Fastify's own parsers only (JSON with a depth limit, see configureApp): Nest's would add
    // application/x-www-form-urlencoded, a body a cross-site form can send.
    bodyParser: false,
  });
  const ui = configureApp(app, ctx, findUiDir(opts.uiDir), !!opts.logger || !!jsonLogger);
  const scaleout = ctx.scaleout;
  if (scaleout) (app.getHttpAdapter().getInstance() as FastifyInstance).addHook('onClose', async () => scaleout.close());
  if (opts.logger) new Logger('server').log(`serving web UI from ${ui}`);
  opts.beforeReady?.(app.getHttpAdapter().getInstance() as FastifyInstance);
  await app.init();
  await (app.getHttpAdapter().getInstance() as FastifyInstance).ready();
  return app;
}

function portFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' ? resolve(false) : reject(err)));
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
}

/**
 * Starts the server (api.md §7.2): an explicit port is bound exactly; otherwise the first free port
 * of base..base+99. The caller owns signals: `app.close()` ends open SSE streams and sockets.
 */
export async function startServer(opts: ServerOptions): Promise<{ app: NestFastifyApplication; url: string; port: number }> {
  const app = await createApiApp(opts);
  const ctx = app.get<ApiContext>(API_CONTEXT);
  const host = bindHostOf(opts, ctx.config);
  if (!ctx.apiKey && !opts.insecureNoAuth && !isLoopbackHost(host)) {
    await app.close();
    throw new Error(`refusing to listen on ${host} without an API key (set one, or allow it explicitly with --insecure-no-auth)`);
  }
  const exposure = exposureRefusal(host, configuredHosts(opts, ctx.config), !!opts.allowAnyHost);
  if (exposure) {
    await app.close();
    throw new Error(exposure);
  }
  const base = opts.port ?? ctx.config?.api?.port ?? DEFAULT_PORT;
  let port = base;
  if (!opts.portExplicit && base !== 0) {
    let found: number | undefined;
    for (let p = base; p < base + PORT_RANGE && p <= 65535; p++) {
      if (await portFree(p, host)) {
        found = p;
        break;
      }
    }
    if (found === undefined) {
      await app.close();
      throw new Error(`no free port in range ${base}-${base + PORT_RANGE - 1}`);
    }
    port = found;
  }
  try {
    await app.listen(port, host);
  } catch (err) {
    await app.close();
    throw err;
  }
  const address = app.getHttpServer().address();
  const actual = typeof address === 'object' && address ? address.port : port;
  const loopback = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  ctx.conductorUrl = `http://${loopback}:${actual}`;
  if (opts.logLevel) new Logger('server').log({ msg: 'server_listening', host, port: actual, root: ctx.root, log_level: opts.logLevel });
  if (opts.logger) {
    const logger = new Logger('server');
    logger.log(`API listening on http://${host}:${actual}/`);
    logger.log(`Web UI available at http://${loopback === '127.0.0.1' ? 'localhost' : loopback}:${actual}/ui/`);
  }
  return { app, url: ctx.conductorUrl, port: actual };
}
