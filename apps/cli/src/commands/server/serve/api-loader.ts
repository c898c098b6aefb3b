import * as nodeModule from 'node:module';
import { join } from 'node:path';
import type { NatsAuth } from '@app/scaleout';
import { packageRoot } from '../../../version';
import { fileMtimeMs, pathExists } from '@app/storage';

/** What the CLI needs from apps/api/src/server.ts (loaded at run time from the API build). */
export interface ApiServerOptions {
  root: string;
  config?: unknown;
  configPath?: string;
  host?: string;
  port?: number;
  portExplicit?: boolean;
  apiKey?: string;
  disableTaskStart?: boolean;
  insecureNoAuth?: boolean;
  uiDir?: string;
  logger?: unknown;
  nats?: string;
  natsAuth?: NatsAuth;
}

export interface StartedApiServer {
  app: { close(): Promise<void> };
  url: string;
  port: number;
}

export interface ApiServerModule {
  startServer(opts: ApiServerOptions): Promise<StartedApiServer>;
}

export function apiServerEntry(root = packageRoot()): string {
  return join(root, 'dist', 'apps', 'api', 'apps', 'api', 'src', 'server.js');
}

/** The API server's one-file bundle (scripts/bundle-api.js), beside the tsc build of `entry`. */
export function apiServerBundle(entry = apiServerEntry()): string {
  return join(entry, '..', '..', '..', '..', 'bundle', 'server.js');
}

/**
 * The bundle when it was made from the current `nest build api` output (as bin/launch.js picks
 * the CLI's); after a bare `nest build api`, or with CONDUCTOR_API_UNBUNDLED=1, the tsc build.
 */
export function apiServerFile(entry = apiServerEntry()): string {
  if (process.env.CONDUCTOR_API_UNBUNDLED) return entry;
  const bundle = apiServerBundle(entry);
  const bundleTime = fileMtimeMs(bundle);
  const entryTime = fileMtimeMs(entry);
  return bundleTime !== undefined && entryTime !== undefined && bundleTime >= entryTime ? bundle : entry;
}

interface CodeCache {
  requireWithCodeCache(file: string, variant: string): unknown;
  saveCodeCache(file: string): boolean;
}

/**
 * Node's own require (also inside the CLI bundle, which cannot hold a file named at run time); the
 * bundle through V8's code cache on Node without `module.enableCompileCache` (bin/code-cache.js),
 * saved once the server is ready, since a server may never exit cleanly.
 */
function requireApi(file: string, bundled: boolean): Partial<ApiServerModule> {
  const nodeRequire = nodeModule.createRequire(__filename);
  const cacheJs = join(packageRoot(), 'bin', 'code-cache.js');
  if (!bundled || typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function' || process.env.NODE_DISABLE_COMPILE_CACHE || !pathExists(cacheJs)) {
    return nodeRequire(file) as Partial<ApiServerModule>;
  }
  const cache = nodeRequire(cacheJs) as CodeCache;
  const mod = cache.requireWithCodeCache(file, 'serve') as Partial<ApiServerModule>;
  const start = mod.startServer;
  if (typeof start !== 'function') return mod;
  return {
    ...mod,
    startServer: async (opts) => {
      const server = await start(opts);
      setImmediate(() => cache.saveCodeCache(file));
      return server;
    },
  };
}

/**
 * The CLI and the API compile to different dist folders, and the CLI must not pay for loading
 * the server unless it serves: the API is required lazily from its own build (its bundle when current).
 */
export function loadApiServer(entry = apiServerEntry()): ApiServerModule {
  if (!pathExists(entry)) {
    throw new Error(`the API server is not built (missing ${entry}); run \`npx nest build api\` (or \`npm run build\`)`);
  }
  const file = apiServerFile(entry);
  const mod = requireApi(file, file !== entry);
  if (typeof mod.startServer !== 'function') throw new Error(`${file} does not export startServer()`);
  return mod as ApiServerModule;
}
