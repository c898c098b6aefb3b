import { Inject } from '@nestjs/common';
import { Command, Option } from 'nest-commander';
import { LIVENESS_PROBE, type LivenessProbe, STORAGE_INDEX_FACTORY, type StorageIndexFactory } from '@app/storage';
import { ScopeOptionParsers } from './support/scope-options';
import { STATUS_FLAGS, type StatusOptions } from './status-flags';
import { runStatus } from './status-run';

export { renderStatus, renderStatusTree } from './status-run';

// `status` normally runs on the Nest-free hot path (apps/cli/src/fast); this class serves `--help`,
// usage errors and the Nest composition root (test/e2e/di).
@Command({
  name: 'status',
  description: 'Show the latest run status of every task of a project (or of one task)',
})
export class StatusCommand extends ScopeOptionParsers {
  constructor(
    @Inject(LIVENESS_PROBE) private readonly probe: LivenessProbe,
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
  ) {
    super();
  }

  async run(_params: string[], options: StatusOptions = {}): Promise<void> {
    await runStatus(options, { probe: this.probe, indexFor: this.indexFor, stdout: process.stdout });
  }

  @Option(STATUS_FLAGS.tree) parseTree(): boolean { return true; }
  @Option(STATUS_FLAGS.status) parseStatus(v: string): string { return v; }
  @Option(STATUS_FLAGS.json) parseJson(): boolean { return true; }
  @Option(STATUS_FLAGS.concise) parseConcise(): boolean { return true; }
  @Option(STATUS_FLAGS.activity) parseActivity(): boolean { return true; }
  @Option(STATUS_FLAGS.usage) parseUsage(): boolean { return true; }
  @Option(STATUS_FLAGS.driftAfter) parseDriftAfter(v: string): string { return v; }
}
