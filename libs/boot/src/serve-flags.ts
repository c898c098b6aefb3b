/**
 * The flags of `run-agent serve` / `conductor [serve]`, defined once: the CLI's ServeCommand
 * declares them with `@Option(SERVE_FLAGS.x)`, and bin/launch.js parses them with
 * serveFlagsFromArgv() (this file's tsc build) to start the API bundle without loading the CLI; the
 * options are the API's ServeFlags (apps/api/src/boot/serve-options.ts).
 * Plain module (node:util and a constants file only): nothing of NestJS or the server loads with it.
 */
import { API_DEFAULTS } from '@app/storage/config/config.types';
import { parseFlagArgs, type FlagSpec } from './flag-args';

/** NATS credentials and TLS flags of `conductor --nats` and `run-agent worker` (docs/scale-out.md). */
export const NATS_AUTH_FLAGS = {
  natsToken: { flags: '--nats-token <token>', type: 'string', description: 'NATS authentication token (default $CONDUCTOR_NATS_TOKEN)' },
  natsUser: { flags: '--nats-user <user>', type: 'string', description: 'NATS user (with --nats-password or $CONDUCTOR_NATS_PASSWORD)' },
  natsPassword: { flags: '--nats-password <password>', type: 'string', description: 'NATS password (default $CONDUCTOR_NATS_PASSWORD)' },
  natsCreds: { flags: '--nats-creds <file>', type: 'string', description: 'NATS credentials file (user JWT and nkey seed)' },
  natsTlsCa: { flags: '--nats-tls-ca <file>', type: 'string', description: "CA certificate of the NATS server's TLS certificate (turns TLS on)" },
  natsTlsCert: { flags: '--nats-tls-cert <file>', type: 'string', description: 'client certificate for NATS mutual TLS (with --nats-tls-key)' },
  natsTlsKey: { flags: '--nats-tls-key <file>', type: 'string', description: 'client key for NATS mutual TLS (with --nats-tls-cert)' },
} as const satisfies Record<string, FlagSpec>;

/** ServeCommand's own flags (help lists them in this order, then the NATS auth flags it inherits). */
export const SERVE_OWN_FLAGS = {
  host: { flags: '--host <host>', type: 'string', description: 'address to bind (default $CONDUCTOR_HOST, api.host, 127.0.0.1; other than loopback needs --allowed-host or --allow-any-host)' },
  port: { flags: '--port <port>', type: 'string', description: `port to bind (default $CONDUCTOR_PORT, api.port, ${API_DEFAULTS.port}; 0 = any free port)` },
  root: { flags: '--root <dir>', type: 'string', description: 'runs root (default $CONDUCTOR_ROOT, storage.runs_dir, ~/.run-agent/runs)' },
  config: { flags: '--config <path>', type: 'string', description: 'config file (default $CONDUCTOR_CONFIG, ./config.yaml, ./config.yml)' },
  disableTaskStart: { flags: '--disable-task-start', type: 'boolean', description: 'monitoring mode: never start tasks' },
  apiKey: { flags: '--api-key <key>', type: 'string', description: 'require this API key (default $CONDUCTOR_API_KEY, api.api_key, else the key generated in ~/.run-agent/api-key)' },
  noAuth: { flags: '--no-auth', type: 'boolean', description: 'no API key when none is configured: loopback binds only (prints a warning; $CONDUCTOR_NO_AUTH=1)' },
  insecureNoAuth: { flags: '--insecure-no-auth', type: 'boolean', description: 'no API key when none is configured, also beyond loopback (prints a warning; $CONDUCTOR_INSECURE_NO_AUTH=1)' },
  allowedHost: { flags: '--allowed-host <host>', type: 'string', multiple: true, description: 'also answer requests naming this Host, e.g. conductor.example.com or name:port (repeatable; adds to api.allowed_hosts and $CONDUCTOR_ALLOWED_HOSTS)' },
  allowAnyHost: { flags: '--allow-any-host', type: 'boolean', description: 'turn the Host check (DNS-rebinding defence) off (prints a warning; $CONDUCTOR_ALLOW_ANY_HOST=1)' },
  nats: { flags: '--nats <url>', type: 'string', description: 'dispatch tasks to `run-agent worker` hosts over NATS JetStream; the runs root becomes their replica (docs/scale-out.md)' },
  logLevel: { flags: '--log-level <level>', type: 'string', description: 'server log level: error, warn, info (default; one line per request) or debug (default $CONDUCTOR_LOG_LEVEL, api.log_level)' },
  watchdogInterval: { flags: '--watchdog-interval <duration>', type: 'string', description: 'health probe interval (default 30s; 0 disables)' },
  watchdogMaxFailures: { flags: '--watchdog-max-failures <n>', type: 'string', description: 'exit after this many consecutive failed probes (default 3)' },
} as const satisfies Record<string, FlagSpec>;

export const SERVE_FLAGS = { ...SERVE_OWN_FLAGS, ...NATS_AUTH_FLAGS } as const satisfies Record<string, FlagSpec>;

/**
 * The serve flags of a command line that starts the server: `run-agent serve …`, `conductor serve …`,
 * `conductor` alone or `conductor --flag …` (as the CLI's conductorArgv maps them). Undefined for any
 * other command, `--help`, or a usage error: the CLI then runs it and commander reports in its words.
 */
export function serveFlagsFromArgv(programName: string, argv: string[]): Record<string, unknown> | undefined {
  let args: string[];
  if (argv[0] === 'serve') args = argv.slice(1);
  else if (programName === 'conductor' && (argv.length === 0 || argv[0].startsWith('-'))) args = argv;
  else return undefined;
  return parseFlagArgs(SERVE_FLAGS, args);
}
