import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { NatsAuth } from '@app/scaleout';
import { packageRoot } from '../../../version';
import { pathExists } from '@app/storage';

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

/**
 * The CLI and the API compile to different dist folders, and the CLI must not pay for loading
 * the server unless it serves: the API is required lazily from its own build.
 */
export function loadApiServer(entry = apiServerEntry()): ApiServerModule {
  if (!pathExists(entry)) {
    throw new Error(`the API server is not built (missing ${entry}); run \`npx nest build api\` (or \`npm run build\`)`);
  }
  // Node's own require, also inside the CLI bundle (scripts/bundle-cli.js), which cannot hold a file named at run time
  const mod = createRequire(__filename)(entry) as Partial<ApiServerModule>;
  if (typeof mod.startServer !== 'function') throw new Error(`${entry} does not export startServer()`);
  return mod as ApiServerModule;
}
