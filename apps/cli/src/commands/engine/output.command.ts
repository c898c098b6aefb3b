import { Inject } from '@nestjs/common';
import { Command, Option } from 'nest-commander';
import { CHANGE_FEED, type ChangeFeed, LIVENESS_PROBE, type LivenessProbe, STORAGE_INDEX_FACTORY, type StorageIndexFactory } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { ScopeOptionParsers } from './support/scope-options';
import { OUTPUT_FLAGS, type OutputOptions } from './output-flags';
import { runOutput } from './output-run';
import { OutputSynthesizeCommand } from './output-synthesize.command';

export { parseOutputFile, resolveRunDir } from './output-run';

// `output` (without --follow) normally runs on the Nest-free hot path (apps/cli/src/fast); this class
// serves `--help`, usage errors, `--follow`, `output synthesize` and the Nest composition root.
@Command({
  name: 'output',
  description: 'Print a file of a run (default: output.md of the newest run), or follow it while the run is live',
  subCommands: [OutputSynthesizeCommand],
})
export class OutputCommand extends ScopeOptionParsers {
  constructor(
    @Inject(LIVENESS_PROBE) private readonly probe: LivenessProbe,
    @Inject(CHANGE_FEED) private readonly feed: ChangeFeed,
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
  ) {
    super();
  }

  async run(params: string[], options: OutputOptions = {}): Promise<void> {
    if (params.length) throw new UsageError(`unknown argument ${JSON.stringify(params[0])} (did you mean "output synthesize"?)`);
    await runOutput(options, { probe: this.probe, feed: this.feed, indexFor: this.indexFor, stdout: process.stdout });
  }

  @Option(OUTPUT_FLAGS.runDir) parseRunDir(v: string): string { return v; }
  @Option(OUTPUT_FLAGS.run) parseRun(v: string): string { return v; }
  @Option(OUTPUT_FLAGS.tail) parseTail(v: string): string { return v; }
  @Option(OUTPUT_FLAGS.file) parseFile(v: string): string { return v; }
  @Option(OUTPUT_FLAGS.follow) parseFollow(): boolean { return true; }
}
