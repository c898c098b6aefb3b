// The one place a server process is run from (docs/decisions.md, "Server start-up: the API bundle
// boots a bare conductor"): `conductor`, `conductor [serve] --flags` and `run-agent serve --flags`
// through bin/launch.js (serveMain, the API bundle alone), or, when that bundle is not current or the
// flags need commander's words, through the CLI's ServeCommand (runServe, via apps/cli/.../api-loader.ts),
// both with the same settings, banner, exit codes and signals.
// '../server' first: it trims what NestJS and class-validator load before anything else loads.
import { serverVersion, startServer } from '../server';
import * as nodeModule from 'node:module';
import { displayHost, loopbackHost, resolveServeOptions, ServeFlags } from './serve-options';
import { startWatchdog } from './watchdog';

export type { ServeFlags } from './serve-options';
// the bundle's entry is this file: startServer() stays reachable from it (tests start a server in-process)
export { startServer };
export type ProgramName = 'run-agent' | 'conductor';

type StartedApiServer = Awaited<ReturnType<typeof startServer>>;

const SHUTDOWN_DEADLINE_MS = 5000;

/** module.flushCompileCache (Node >= 22.10; not in @types/node 20). */
function flushCompileCache(): void {
  try {
    (nodeModule as { flushCompileCache?: () => void }).flushCompileCache?.();
  } catch {
    // an optimisation only: an unwritable cache folder must not stop the server
  }
}

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Closes the app within the deadline; false when it did not finish in time. */
async function closeWithin(server: StartedApiServer, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    const closed = server.app.close().then(
      () => true,
      (err: NodeJS.ErrnoException) => {
        // the API app may already be closing itself on the same signal (its own shutdown hooks)
        if (err?.code !== 'ERR_SERVER_NOT_RUNNING') log(`shutdown: ${err?.message ?? String(err)}`);
        return true;
      },
    );
    return await Promise.race([closed, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `run-agent serve` and `conductor` without a subcommand: starts the API server and keeps
 * running until SIGINT/SIGTERM.
 */
export async function runServe(flags: ServeFlags, programName: ProgramName): Promise<void> {
  const opts = resolveServeOptions(flags);
  process.stdout.write(`${programName} ${serverVersion()}\n`);
  if (opts.authWarning) log(`warning: ${opts.authWarning}`);
  if (opts.hostWarning) log(`warning: ${opts.hostWarning}`);
  if (opts.exposureWarning) log(`warning: ${opts.exposureWarning}`);

  // Registered before the server starts, and kept for the life of the process: an own listener
  // stops the default "die by signal" action, so a signal always ends in a clean exit 0.
  let stopRequested: (signal: string) => void = () => undefined;
  const stopped = new Promise<string>((resolve) => (stopRequested = resolve));
  const onSignal = (signal: NodeJS.Signals) => stopRequested(signal);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const server = await startServer({
    root: opts.root,
    config: opts.config,
    configPath: opts.configPath,
    host: opts.host,
    port: opts.port,
    portExplicit: opts.portExplicit,
    apiKey: opts.apiKey,
    disableTaskStart: opts.disableTaskStart,
    insecureNoAuth: !!opts.exposureWarning,
    allowedHosts: opts.allowedHosts,
    allowAnyHost: opts.allowAnyHost,
    nats: opts.nats,
    natsAuth: opts.natsAuth,
    logLevel: opts.logLevel,
  });
  process.stdout.write(`API listening on http://${displayHostForApi(opts.host)}:${server.port}/\n`);
  process.stdout.write(`Web UI available at ${dashboardLink(opts, server.port)}\n`);
  if (opts.keyFile) process.stdout.write(`API key: ${opts.keyFile.path} (${opts.keyFile.created ? 'generated now' : 'saved'}; clients on this host read it from there)\n`);
  if (opts.disableTaskStart) process.stdout.write('Task start is disabled (monitoring mode)\n');
  if (opts.nats) process.stdout.write(`Tasks go to worker hosts via ${opts.nats}\n`);
  process.stdout.write(`Runs root: ${opts.root}\n`);
  // a server may never exit cleanly: write Node's compile cache (bin/launch.js switches it on) now that the boot ran
  flushCompileCache();

  const stopWatchdog = startWatchdog({
    healthUrl: `http://${loopbackHost(opts.host)}:${server.port}/healthz`,
    intervalMs: opts.watchdogIntervalMs,
    maxFailures: opts.watchdogMaxFailures,
    onFailure: (count, reason) => log(`watchdog: health check failed (${count}/${opts.watchdogMaxFailures}): ${reason}`),
    onGiveUp: (reason) => {
      log(`watchdog: ${reason}; exiting`);
      process.exit(1);
    },
  });

  const signal = await stopped;
  stopWatchdog();
  log(`received ${signal}: shutting down`);
  const clean = await closeWithin(server, SHUTDOWN_DEADLINE_MS);
  if (!clean) log(`shutdown: open connections did not close within ${SHUTDOWN_DEADLINE_MS / 1000}s`);
  process.exitCode = 0;
  // Task loops started by the server run in their own process groups and are not awaited
  // (upstream behaviour): do not let their pipes keep this process alive.
  setTimeout(() => process.exit(0), 1000).unref();
}

/**
 * The dashboard's address; with the generated key it carries the key in the URL fragment, which
 * browsers never send to a server (no query string, no cookie): the dashboard stores it and drops
 * the fragment. A key the operator gave (flag, env, config) is never printed.
 */
function dashboardLink(opts: ReturnType<typeof resolveServeOptions>, port: number): string {
  const base = `http://${displayHost(opts.host)}:${port}/ui/`;
  return opts.keySource === 'file' && opts.apiKey ? `${base}#token=${opts.apiKey}` : base;
}

function displayHostForApi(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** `Error: <message>` on stderr; exit 2 for bad input (UsageError, a lib's INVALID_INPUT), else 1. */
function reportServeError(err: unknown): void {
  process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = (err as { code?: unknown } | null)?.code === 'INVALID_INPUT' ? 2 : 1;
}

/**
 * The launcher's entry (bin/launch.js): a bare `conductor`, or `run-agent serve` / `conductor [serve]`
 * with flags it parsed with serve-flags.ts; the rest from CONDUCTOR_* and the config file; errors as one line.
 */
export async function serveMain(programName: ProgramName = 'conductor', flags: ServeFlags = {}): Promise<void> {
  try {
    await runServe(flags, programName);
  } catch (err) {
    reportServeError(err);
  }
}
