import 'reflect-metadata';
import { CommandFactory } from 'nest-commander';
import { CliModule } from './cli.module';
import { EXIT_OK, EXIT_USAGE, reportError } from './common/cli-errors';
import type { ProgramName } from './main';

interface CommanderError extends Error {
  code?: string;
  exitCode?: number;
}

export async function runNestCli(argv: string[], programName: ProgramName): Promise<void> {
  process.argv = [process.argv[0], programName, ...argv];
  const app = await CommandFactory.createWithoutRunning(CliModule, {
    logger: ['error', 'warn'],
    serviceErrorHandler: reportError,
    // Commander has already printed its message; map parse errors to the usage exit code.
    errorHandler: (err: CommanderError) => {
      const benign = err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version';
      process.exit(benign ? EXIT_OK : EXIT_USAGE);
    },
  });
  app.enableShutdownHooks();
  await CommandFactory.runApplication(app);
  await app.close();
}
