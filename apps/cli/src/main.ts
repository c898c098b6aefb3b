#!/usr/bin/env node
// First of all (issue #11): a child `run-agent job` registers with its parent run before anything slow loads.
import { registerPendingChild } from '@app/runner/pending-child';
import { conductorArgv } from './commands/server/conductor-dispatch';
import { runFastPath } from './fast-path';

export type ProgramName = 'run-agent' | 'conductor';

/**
 * Entry point of both executables. Hot paths that must start fast are answered here
 * without loading NestJS; everything else boots the nest-commander application.
 */
export async function main(argv: string[], programName: ProgramName = 'run-agent'): Promise<void> {
  if (programName === 'run-agent') registerPendingChild(argv);
  // --version, `bus post`, `bus read` and the hot commands of fast/hot-commands.ts never start NestJS (apps/cli/src/fast-path.ts).
  if (await runFastPath(argv, programName)) return;
  if (programName === 'conductor') argv = conductorArgv(argv);
  // Loaded lazily so that the fast paths above never pay for NestJS start-up.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { runNestCli } = require('./nest-cli') as typeof import('./nest-cli');
  await runNestCli(argv, programName);
}

/** The host's task supervisor on `socketPath` (bin/task-supervisor.js; apps/cli/src/supervisor). */
export function superviseTasks(socketPath: string): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('./supervisor/task-supervisor') as typeof import('./supervisor/task-supervisor')).superviseTasks(socketPath);
}

if (require.main === module) {
  void main(process.argv.slice(2));
}
