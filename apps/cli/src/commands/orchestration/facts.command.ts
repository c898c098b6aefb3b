import { Inject } from '@nestjs/common';
import { Command, CommandRunner, Option, SubCommand } from 'nest-commander';
import { promoteFacts } from '@app/orchestration';
import { rfc3339, STORAGE_INDEX_FACTORY, type StorageIndexFactory } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { withParentOptions } from '../engine/job-common';
import { resolveRoot } from '../engine/support/runs-root';

interface PromoteFlags {
  project?: string;
  root?: string;
  dryRun?: boolean;
  filterType?: string;
  since?: string;
  json?: boolean;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

@SubCommand({
  name: 'promote',
  description:
    'Promote FACT messages of every task bus of a project into <project>/PROJECT-FACTS.md. A fact already in the file ' +
    '(same whole body, multi-line bodies included) or seen twice is written once.',
})
export class FactsPromoteCommand extends CommandRunner {
  constructor(@Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory) {
    super();
  }

  async run(_args: string[], options: PromoteFlags = {}): Promise<void> {
    const flags = withParentOptions(this.command, options);
    const projectId = flags.project?.trim() || process.env.JRUN_PROJECT_ID?.trim();
    if (!projectId) throw new UsageError('--project is required (or set JRUN_PROJECT_ID)');
    let since: Date | undefined;
    if (flags.since !== undefined) {
      if (!RFC3339.test(flags.since.trim())) throw new UsageError(`invalid --since "${flags.since}": use RFC3339, e.g. 2026-01-02T15:04:05Z`);
      since = new Date(flags.since.trim());
    }
    const result = await promoteFacts({ layout: this.indexFor(resolveRoot(flags.root)).layout, projectId, dryRun: flags.dryRun, filterType: flags.filterType, since });
    if (flags.json) {
      process.stdout.write(
        `${JSON.stringify({ path: result.path, dry_run: flags.dryRun === true, promoted: result.promoted.length, already_present: result.alreadyPresent, written: result.written, facts: result.promoted.map((f) => ({ task_id: f.taskId, body: f.body, timestamp: rfc3339(f.timestamp) })) }, null, 2)}\n`,
      );
      return;
    }
    if (flags.dryRun) {
      process.stdout.write(`dry-run: would promote ${result.promoted.length} fact(s) (${result.alreadyPresent} already present)\n`);
      return;
    }
    process.stdout.write(`promoted ${result.promoted.length} fact(s), ${result.alreadyPresent} already present\n`);
    if (result.written) process.stdout.write(`written: ${result.path}\n`);
  }

  @Option({ flags: '--project <id>', description: 'project id (default: $JRUN_PROJECT_ID)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--dry-run', description: 'only count what would be promoted; write nothing' })
  parseDryRun(): boolean {
    return true;
  }

  @Option({ flags: '--filter-type <type>', description: 'message type to promote, case-insensitive (default FACT)' })
  parseFilterType(v: string): string {
    return v;
  }

  @Option({ flags: '--since <time>', description: 'skip messages older than this RFC3339 time' })
  parseSince(v: string): string {
    return v;
  }

  @Option({ flags: '--json', description: 'print the result as JSON' })
  parseJson(): boolean {
    return true;
  }
}

@Command({ name: 'facts', description: 'Project knowledge from the message buses (promote)', subCommands: [FactsPromoteCommand] })
export class FactsCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp();
  }
}
