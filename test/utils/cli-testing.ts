import type { TestingModule } from '@nestjs/testing';
import { CommandTestFactory } from 'nest-commander-testing';
import { AGENT_EXECUTOR, type AgentExecutor } from '@app/runner';
import { CHANGE_FEED, LIVENESS_PROBE, type ChangeFeed, type LivenessProbe } from '@app/storage';
import { WebhookService } from '@app/webhook';
import { fullCliModule } from '../../apps/cli/src/cli.module';

/** The replaceable parts a test swaps in the CLI's Nest root (the feed only when given). */
export interface SwappedCliSeams {
  executor: AgentExecutor;
  probe: LivenessProbe;
  webhooks: unknown;
  feed?: ChangeFeed;
}

/** CliModule (the nest-commander composition root) with its seams swapped, as a testing module. */
export function swappedCliModule(seams: SwappedCliSeams): Promise<TestingModule> {
  let builder = CommandTestFactory.createTestingCommand({ imports: [fullCliModule()] })
    .overrideProvider(AGENT_EXECUTOR)
    .useValue(seams.executor)
    .overrideProvider(LIVENESS_PROBE)
    .useValue(seams.probe)
    .overrideProvider(WebhookService)
    .useValue(seams.webhooks);
  if (seams.feed) builder = builder.overrideProvider(CHANGE_FEED).useValue(seams.feed);
  return builder.compile();
}

/**
 * What the commands write to stdout, test by test: registers a beforeEach (empties the array, spies
 * on process.stdout.write) and an afterEach (restores it) in the calling describe.
 */
export function captureStdout(): string[] {
  const out: string[] = [];
  let spy: jest.SpyInstance | undefined;
  beforeEach(() => {
    out.length = 0;
    spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
  });
  afterEach(() => spy?.mockRestore());
  return out;
}
