import { Inject } from '@nestjs/common';
import { Command, CommandRunner, Option } from 'nest-commander';
import { formatGoDuration, gcProjects, gcSummary, parseSizeBytes, pruneChildQueues, runGc } from '@app/runner';
import { gcTaskWorktrees } from './support/worktree-gc';
import { LIVENESS_PROBE, type LivenessProbe, STORAGE_INDEX_FACTORY, type StorageIndexFactory } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { durationFlag } from './support/options';
import { resolveRoot } from './support/runs-root';

interface GcOptions {
  root?: string;
  olderThan?: string;
  dryRun?: boolean;
  project?: string;
  keepFailed?: boolean;
  rotateBus?: boolean;
  busMaxSize?: string;
  deleteDoneTasks?: boolean;
  json?: boolean;
  force?: boolean;
}

export { parseSizeBytes };

@Command({
  name: 'gc',
  description: 'Delete old finished run folders (and optionally rotate large message buses and remove finished tasks)',
})
export class GcCommand extends CommandRunner {
  constructor(
    @Inject(LIVENESS_PROBE) private readonly probe: LivenessProbe,
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
  ) {
    super();
  }

  async run(params: string[], options: GcOptions = {}): Promise<void> {
    if (params.length) throw new UsageError(`unexpected argument ${JSON.stringify(params[0])}`);
    const olderThanMs = durationFlag(options.olderThan ?? '168h', '--older-than');
    const sizeText = options.busMaxSize ?? '10MB';
    let busMaxBytes: number;
    try {
      busMaxBytes = parseSizeBytes(sizeText);
    } catch (err) {
      throw new UsageError(`invalid --bus-max-size ${JSON.stringify(sizeText)}: ${(err as Error).message}`);
    }
    const layout = this.indexFor(resolveRoot(options.root)).layout;
    const projects = gcProjects(layout, options.project);
    const json = !!options.json;
    // worktrees first: --delete-done-tasks would remove the records that name them
    const worktrees = await gcTaskWorktrees(layout, {
      cutoff: new Date(Date.now() - olderThanMs),
      dryRun: !!options.dryRun,
      force: !!options.force,
      projects: options.project?.trim() ? projects : undefined,
      log: json ? () => undefined : (line) => process.stdout.write(`${line}\n`),
      warn: (line) => process.stderr.write(`${line}\n`),
    });
    const report = runGc(layout, projects, {
      cutoff: new Date(Date.now() - olderThanMs),
      dryRun: !!options.dryRun,
      keepFailed: !!options.keepFailed,
      rotateBus: !!options.rotateBus,
      busMaxBytes,
      deleteDoneTasks: !!options.deleteDoneTasks,
      log: json ? () => undefined : (line) => process.stdout.write(`${line}\n`),
      warn: (line) => process.stderr.write(`${line}\n`),
    }, this.probe);
    // the fan-out governor's children queues of parents with no child running or waiting (issue #33)
    const queues = options.project?.trim() ? [] : pruneChildQueues(layout.root, !!options.dryRun);
    if (json) process.stdout.write(`${JSON.stringify({ ...report, worktrees, older_than: formatGoDuration(olderThanMs), fanout_queues_removed: queues.length }, null, 2)}\n`);
    else process.stdout.write(gcSummary(report) + (queues.length ? `${options.dryRun ? 'Would remove' : 'Removed'} ${queues.length} idle fan-out queue folder(s)\n` : ''));
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--older-than <duration>', description: 'delete runs that started longer ago than this (Go duration, default 168h)' })
  parseOlderThan(v: string): string {
    return v;
  }

  @Option({ flags: '--dry-run', description: 'print what would be deleted or rotated, change nothing' })
  parseDryRun(): boolean {
    return true;
  }

  @Option({ flags: '--project <id>', description: 'only this project (default: every project under the root)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--keep-failed', description: 'keep failed runs' })
  parseKeepFailed(): boolean {
    return true;
  }

  @Option({ flags: '--rotate-bus', description: 'archive message bus files larger than --bus-max-size (<bus>.<YYYYMMDD-HHMMSS>.archived)' })
  parseRotateBus(): boolean {
    return true;
  }

  @Option({ flags: '--bus-max-size <size>', description: 'rotation threshold: bytes with optional KB/MB/GB suffix, 1024-based (default 10MB)' })
  parseBusMaxSize(v: string): string {
    return v;
  }

  @Option({ flags: '--delete-done-tasks', description: 'also delete task folders that have DONE, no runs left and are older than --older-than' })
  parseDeleteDoneTasks(): boolean {
    return true;
  }

  @Option({ flags: '--force', description: 'also remove worktrees of old tasks whose branch is not merged (the branch is kept)' })
  parseForce(): boolean {
    return true;
  }

  @Option({ flags: '--json', description: 'print a JSON report (deleted runs, freed bytes, deleted tasks, rotated buses, warnings) instead of text' })
  parseJson(): boolean {
    return true;
  }
}
