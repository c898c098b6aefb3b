// The one place a RunnerService is constructed outside NestJS's container (test/arch forbids `new`
// of it elsewhere): the CLI's plain composition root (apps/cli/src/fast/plain-root.ts) for the hot
// commands, and RunnerModule's factory provider for both apps' Nest containers.
import type { RunnerModuleOptions } from './runner.providers';
import { RunnerService, type RunnerSeams } from './runner.service';

/**
 * A RunnerService with the given parts, as RunnerModule.forRoot(options) wires it (no options: it
 * stops its agents on shutdown, as the class's default).
 */
export function createRunnerService(seams: RunnerSeams, options?: RunnerModuleOptions): RunnerService {
  return new RunnerService(seams, options);
}
