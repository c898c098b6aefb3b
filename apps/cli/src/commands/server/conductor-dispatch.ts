// Plain module (no NestJS): main.ts uses it before deciding to boot the CLI.
import type { Command } from 'commander';

/** First words of `conductor <sub> …` answered by `run-agent server <sub> …` (D16). */
export const CONDUCTOR_CLIENT_SUBCOMMANDS: readonly string[] = ['status', 'update', 'task', 'job', 'project', 'watch', 'bus', 'monitor', 'goal', 'workflow'];

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

/**
 * `conductor --help` lists the shared tree, but for conductor the client subcommands are
 * `server <sub>`: show their descriptions, and say what no subcommand does.
 */
export function describeConductorHelp(root: Command): void {
  const server = root.commands.find((c: Command) => c.name() === 'server');
  for (const name of CONDUCTOR_CLIENT_SUBCOMMANDS) {
    const local = root.commands.find((c: Command) => c.name() === name);
    const remote = server?.commands.find((c: Command) => c.name() === name);
    if (local && remote) local.description(`${remote.description()} (client of a running server; = run-agent server ${name})`);
  }
  root.addHelpText(
    'before',
    'conductor with no command starts the API server and dashboard (flags as in `conductor serve --help`).\n' +
      `${CONDUCTOR_CLIENT_SUBCOMMANDS.join(', ')} talk to a running server ($CONDUCTOR_URL; --api-key / $CONDUCTOR_API_KEY, else the key it saved in ~/.run-agent/api-key);\n` +
      'the other commands work on the runs root directly, as in run-agent.\n',
  );
}
