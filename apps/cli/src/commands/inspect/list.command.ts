import { Inject } from '@nestjs/common';
import { Command, Option } from 'nest-commander';
import { STORAGE_INDEX_FACTORY, type StorageIndexFactory } from '@app/storage';
import { ScopeOptionParsers } from '../engine/support/scope-options';
import { LIST_FLAGS, type ListOptions } from './list-flags';
import { runList } from './list-run';

// `list` normally runs on the Nest-free hot path (apps/cli/src/fast); this class serves `--help`,
// usage errors and the Nest composition root (test/e2e/di).
@Command({
  name: 'list',
  description:
    'List projects of the runs root; with --project its tasks (runs, latest status, DONE, blockers); with --project and --task its runs',
})
export class ListCommand extends ScopeOptionParsers {
  constructor(@Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory) {
    super();
  }

  async run(_params: string[], options: ListOptions = {}): Promise<void> {
    await runList(options, { indexFor: this.indexFor, stdout: process.stdout });
  }

  @Option(LIST_FLAGS.status) parseStatus(v: string): string { return v; }
  @Option(LIST_FLAGS.json) parseJson(): boolean { return true; }
  @Option(LIST_FLAGS.tree) parseTree(): boolean { return true; }
  @Option(LIST_FLAGS.usage) parseUsage(): boolean { return true; }
  @Option(LIST_FLAGS.activity) parseActivity(): boolean { return true; }
  @Option(LIST_FLAGS.driftAfter) parseDriftAfter(v: string): string { return v; }
}
