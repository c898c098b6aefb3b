import { Command, Option } from 'nest-commander';
import { NatsAuthOptionParsers } from '../../scaleout/nats-options';
import { loadApiServer } from './api-loader';

/**
 * `run-agent serve` and `conductor serve` (or `conductor --flag …`): starts the API server and keeps
 * running until SIGINT/SIGTERM (nest-commander closes the CLI app as soon as run() resolves). The
 * server process's logic lives in the API build (apps/api/src/boot/serve.ts), as for a bare `conductor`.
 */
@Command({ name: 'serve', description: 'Start the conductor API server and web dashboard' })
export class ServeCommand extends NatsAuthOptionParsers {
  async run(_args: string[], flags: Record<string, unknown>): Promise<void> {
    await loadApiServer().runServe(flags, process.argv[1] === 'conductor' ? 'conductor' : 'run-agent');
  }

  @Option({ flags: '--host <host>', description: 'address to bind (default $CONDUCTOR_HOST, api.host, 127.0.0.1; other than loopback needs an API key or --insecure-no-auth)' })
  parseHost(value: string): string {
    return value;
  }

  @Option({ flags: '--port <port>', description: 'port to bind (default $CONDUCTOR_PORT, api.port, 14355; 0 = any free port)' })
  parsePort(value: string): string {
    return value;
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default $CONDUCTOR_ROOT, storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(value: string): string {
    return value;
  }

  @Option({ flags: '--config <path>', description: 'config file (default $CONDUCTOR_CONFIG, ./config.yaml, ./config.yml)' })
  parseConfig(value: string): string {
    return value;
  }

  @Option({ flags: '--disable-task-start', description: 'monitoring mode: never start tasks' })
  parseDisableTaskStart(): boolean {
    return true;
  }

  @Option({ flags: '--api-key <key>', description: 'require this API key (default $CONDUCTOR_API_KEY)' })
  parseApiKey(value: string): string {
    return value;
  }

  @Option({ flags: '--insecure-no-auth', description: 'allow a non-loopback --host without an API key (prints a warning; $CONDUCTOR_INSECURE_NO_AUTH=1)' })
  parseInsecureNoAuth(): boolean {
    return true;
  }

  @Option({ flags: '--nats <url>', description: 'dispatch tasks to `run-agent worker` hosts over NATS JetStream; the runs root becomes their replica (docs/scale-out.md)' })
  parseNats(value: string): string {
    return value;
  }

  @Option({ flags: '--watchdog-interval <duration>', description: 'health probe interval (default 30s; 0 disables)' })
  parseWatchdogInterval(value: string): string {
    return value;
  }

  @Option({ flags: '--watchdog-max-failures <n>', description: 'exit after this many consecutive failed probes (default 3)' })
  parseWatchdogMaxFailures(value: string): string {
    return value;
  }
}
