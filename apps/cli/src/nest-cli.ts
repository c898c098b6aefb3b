import 'reflect-metadata';
import type { Command } from 'commander';
import { CommandFactory } from 'nest-commander';
// The root commander instance is registered under this (not re-exported) token.
import { Commander } from 'nest-commander/src/constants';
import { CliModule } from './cli.module';
import { EXIT_OK, EXIT_USAGE, reportError } from './common/cli-errors';
import type { ProgramName } from './main';

interface CommanderError extends Error {
  code?: string;
}

/** Commander has already printed its message; parse errors exit with the usage code. */
function exitOnParseError(err: CommanderError): never {
  const benign = err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version';
  process.exit(benign ? EXIT_OK : EXIT_USAGE);
}

/** nest-commander only overrides the root; subcommands would otherwise exit 1 on usage errors. */
function overrideExitEverywhere(command: Command): void {
  command.exitOverride(exitOnParseError);
  command.commands.forEach(overrideExitEverywhere);
}

export async function runNestCli(argv: string[], programName: ProgramName): Promise<void> {
  process.argv = [process.argv[0], programName, ...argv];
  const app = await CommandFactory.createWithoutRunning(CliModule, {
    logger: ['error', 'warn'],
    serviceErrorHandler: reportError,
    errorHandler: exitOnParseError,
  });
  overrideExitEverywhere(app.get<Command>(Commander));
  app.enableShutdownHooks();
  await CommandFactory.runApplication(app);
  await app.close();
}
