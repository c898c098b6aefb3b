// Plain module (no NestJS): main.ts uses it before deciding to boot the CLI.

/** First words of `conductor <sub> …` answered by `run-agent server <sub> …` (D16). */
export const CONDUCTOR_CLIENT_SUBCOMMANDS: readonly string[] = ['status', 'update', 'task', 'job', 'project', 'watch', 'bus', 'monitor'];

const HELP_FLAGS = new Set(['--help', '-h', 'help']);

/**
 * Maps `conductor` argv onto the shared command tree: no subcommand or a leading flag → `serve`
 * (the server, with the same flags); a client subcommand → `server <sub> …`; anything else
 * (`serve`, `help`, `--help`) is left as is.
 */
export function conductorArgv(argv: string[]): string[] {
  const first = argv[0];
  if (first === undefined) return ['serve'];
  if (HELP_FLAGS.has(first)) return argv;
  if (first.startsWith('-')) return ['serve', ...argv];
  if (CONDUCTOR_CLIENT_SUBCOMMANDS.includes(first)) return ['server', ...argv];
  return argv;
}
