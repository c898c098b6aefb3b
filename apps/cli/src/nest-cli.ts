// first: trims what NestJS and nest-commander load (boot/lean-load.ts)
import './boot/lean-nest';
import 'reflect-metadata';
import type { Command } from 'commander';
import { CommandFactory } from 'nest-commander';
// The root commander instance is registered under this (not re-exported) token.
import { Commander } from 'nest-commander/src/constants';
import { cliModuleFor } from './cli.module';
import { describeConductorHelp } from './commands/server/conductor-dispatch';
import { errorLine, EXIT_OK, EXIT_USAGE, reportError, setJsonErrors } from './common/cli-errors';
import type { ProgramName } from './main';
import { productVersion } from './version';

interface CommanderError extends Error {
  code?: string;
}

/** Commander has already printed its message; parse errors exit with the usage code. */
function exitOnParseError(err: CommanderError): never {
  const benign = err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version';
  process.exit(benign ? EXIT_OK : EXIT_USAGE);
}

/** Commander's usage errors in the CLI's one-line `Error: <message>` form (its hint joins the line); JSON under --json. */
export function oneLineUsageError(text: string, json = false): string {
  const message = text.replace(/^error: /, '').replace(/\n\((Did you mean [^)\n]*)\)\s*$/, (_m, hint: string) => ` (d${hint.slice(1)})`).trimEnd();
  return errorLine('USAGE', message, json);
}

interface OutputConfigurable {
  configureOutput(config: { outputError: (text: string, write: (text: string) => void) => void }): unknown;
}

/**
 * nest-commander only overrides the root; subcommands would otherwise exit 1 on usage errors.
 * Positional options: a command stops reading its own options at its subcommand, so a value such as
 * `task cancel --reason --prompt` reaches the subcommand as given instead of being taken by the
 * group's flag of that name (commander's parents otherwise scan every later argument).
 */
function overrideExitEverywhere(command: Command, json: boolean): void {
  command.exitOverride(exitOnParseError);
  command.enablePositionalOptions(true);
  (command as unknown as OutputConfigurable).configureOutput({ outputError: (text, write) => write(oneLineUsageError(text, json)) });
  command.commands.forEach((c: Command) => overrideExitEverywhere(c, json));
}

interface GroupCommand {
  commands: readonly unknown[];
  registeredArguments?: readonly unknown[];
  args: string[];
  parent: GroupCommand | null;
  name(): string;
  error(message: string, opts: { code: string; exitCode: number }): never;
}

/** A command group (`bus`, `server`, …) given an unknown subcommand is a usage error, not help with exit 0. */
function rejectUnknownSubcommands(root: Command): void {
  root.hook('preAction', (_hooked: unknown, action: unknown) => {
    const group = action as GroupCommand;
    if (group.commands.length === 0 || (group.registeredArguments?.length ?? 0) > 0 || group.args.length === 0) return;
    const names: string[] = [];
    for (let c: GroupCommand | null = group; c; c = c.parent) names.unshift(c.name());
    const subcommands = group.commands.map((c) => (c as GroupCommand).name()).filter((n) => n !== 'help');
    group.error(`error: unknown command '${group.args[0]}' for '${names.join(' ')}' (subcommands: ${subcommands.join(', ')})`, {
      code: 'commander.unknownCommand',
      exitCode: 2,
    });
  });
}

/** The CLI application with its commander tree configured (run by runNestCli; read by the docs generator). */
export async function createNestCli(argv: string[], programName: ProgramName) {
  process.argv = [process.argv[0], programName, ...argv];
  const app = await CommandFactory.createWithoutRunning(cliModuleFor(argv), {
    logger: ['error', 'warn'],
    serviceErrorHandler: reportError,
    errorHandler: exitOnParseError,
  });
  const root = app.get<Command>(Commander);
  // Answered by the fast path; registered here so that --help lists it.
  root.version(productVersion(), '-v, --version', 'print the version and exit (--json: as JSON)');
  // a parse error comes before any command's options are known: --json anywhere asks for a JSON error
  overrideExitEverywhere(root, argv.includes('--json'));
  // once parsed, errors are JSON when the command that runs took --json
  root.hook('preAction', (_hooked: Command, action: Command) => setJsonErrors((action.opts() as { json?: unknown }).json === true));
  rejectUnknownSubcommands(root);
  if (programName === 'conductor') describeConductorHelp(root);
  return { app, root };
}

export async function runNestCli(argv: string[], programName: ProgramName): Promise<void> {
  const { app } = await createNestCli(argv, programName);
  app.enableShutdownHooks();
  await CommandFactory.runApplication(app);
  await app.close();
}
