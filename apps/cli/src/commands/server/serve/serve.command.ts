import { Command, Option } from 'nest-commander';
import { SERVE_OWN_FLAGS as F } from '@app/boot';
import { NatsAuthOptionParsers } from '../../scaleout/nats-options';
import { loadApiServer } from './api-loader';

/**
 * `run-agent serve` and `conductor serve` (or `conductor --flag …`): starts the API server and keeps
 * running until SIGINT/SIGTERM (nest-commander closes the CLI app as soon as run() resolves). The
 * server process's logic lives in the API build (apps/api/src/boot/serve.ts), as for a bare `conductor`;
 * the flags are defined in libs/boot/src/serve-flags.ts, which bin/launch.js also parses with
 * to start a current API bundle without this command.
 */
@Command({ name: 'serve', description: 'Start the conductor API server and web dashboard' })
export class ServeCommand extends NatsAuthOptionParsers {
  async run(_args: string[], flags: Record<string, unknown>): Promise<void> {
    await loadApiServer().runServe(flags, process.argv[1] === 'conductor' ? 'conductor' : 'run-agent');
  }

  @Option(F.host) parseHost(v: string) { return v; }
  @Option(F.port) parsePort(v: string) { return v; }
  @Option(F.root) parseRoot(v: string) { return v; }
  @Option(F.config) parseConfig(v: string) { return v; }
  @Option(F.disableTaskStart) parseDisableTaskStart() { return true; }
  @Option(F.apiKey) parseApiKey(v: string) { return v; }
  @Option(F.noAuth) parseNoAuth() { return false; } // commander negates `--no-auth` into `auth: false`
  @Option(F.insecureNoAuth) parseInsecureNoAuth() { return true; }
  @Option(F.allowedHost) parseAllowedHost(v: string, previous: string[] = []) { return [...previous, v]; }
  @Option(F.allowAnyHost) parseAllowAnyHost() { return true; }
  @Option(F.nats) parseNats(v: string) { return v; }
  @Option(F.logLevel) parseLogLevel(v: string) { return v; }
  @Option(F.watchdogInterval) parseWatchdogInterval(v: string) { return v; }
  @Option(F.watchdogMaxFailures) parseWatchdogMaxFailures(v: string) { return v; }
}

