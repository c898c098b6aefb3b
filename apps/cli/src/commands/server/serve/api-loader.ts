import { createRequire } from 'node:module';
import { join } from 'node:path';
import { packageRoot } from '../../../version';
import { fileMtimeMs, pathExists } from '@app/storage';

export type ProgramName = 'run-agent' | 'conductor';

/**
 * What the CLI needs from apps/api/src/boot/serve.ts (loaded at run time from the API build): the
 * server process's one entry, with its settings, banner, exit codes and signal handling. The flags
 * are ServeCommand's options as commander parsed them (apps/api/src/boot/serve-options.ts ServeFlags).
 */
export interface ApiServeModule {
  runServe(flags: object, programName: ProgramName): Promise<void>;
  serveMain(programName: ProgramName): Promise<void>;
}

/** The tsc build of the API's serve entry (bin/launch.js knows the same path). */
export function apiServerEntry(root = packageRoot()): string {
  return join(root, 'dist', 'apps', 'api', 'apps', 'api', 'src', 'boot', 'serve.js');
}

/** The API server's one-file bundle (scripts/bundle-api.js), beside the tsc build of `entry`. */
export function apiServerBundle(entry = apiServerEntry()): string {
  return join(entry, '..', '..', '..', '..', '..', 'bundle', 'server.js');
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

/**
 * The CLI and the API compile to different dist folders, and the CLI must not pay for loading
 * the server unless it serves: the API is required lazily from its own build (its bundle when current).
 */
export function loadApiServer(entry = apiServerEntry()): ApiServeModule {
  if (!pathExists(entry)) {
    throw new Error(`the API server is not built (missing ${entry}); run \`npx nest build api\` (or \`npm run build\`)`);
  }
  const file = apiServerFile(entry);
  // Node's own require (also inside the CLI bundle, which cannot hold a file named at run time)
  const mod = createRequire(__filename)(file) as Partial<ApiServeModule>;
  if (typeof mod.runServe !== 'function' || typeof mod.serveMain !== 'function') throw new Error(`${file} does not export runServe() and serveMain()`);
  return mod as ApiServeModule;
}
