import { Inject } from '@nestjs/common';
import { Command, CommandRunner, Option } from 'nest-commander';
import { relativeRecordPath, scanRecords } from '@app/runner';
import { pathExists, STORAGE_INDEX_FACTORY, type StorageIndexFactory } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { resolveRoot } from '../engine/support/runs-root';

interface DoctorOptions {
  root?: string;
  config?: string;
  json?: boolean;
}

/**
 * `run-agent doctor`: lists every record file of the runs root that cannot be parsed (run-info,
 * task config and settings, worktree records, message buses that are not regular files). Exit 0 when clean, 1 when it found any, 2 on bad input.
 * Read-only: it never changes, moves or deletes a file. The logic is @app/runner's scanRecords.
 */
@Command({
  name: 'doctor',
  description: 'List the record files of the runs root that cannot be parsed (run-info.yaml, TASK-CONFIG.yaml, TASK-SETTINGS.yaml, WORKTREE.yaml) and message buses that are not regular files; exit 1 when any',
})
export class DoctorCommand extends CommandRunner {
  constructor(@Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory) {
    super();
  }

  async run(params: string[], options: DoctorOptions = {}): Promise<void> {
    if (params.length) throw new UsageError(`unexpected argument ${JSON.stringify(params[0])}`);
    const root = resolveRoot(options.root, process.env, options.config);
    if (options.root?.trim() && !pathExists(root)) throw new UsageError(`runs root not found: ${root}`);
    const problems = scanRecords(this.indexFor(root));
    if (options.json) {
      process.stdout.write(`${JSON.stringify({ root, problems }, null, 2)}\n`);
    } else if (problems.length === 0) {
      process.stdout.write(`no unreadable records in ${root}\n`);
    } else {
      for (const p of problems) process.stdout.write(`${relativeRecordPath(root, p)}\t${p.kind}\t${p.reason}\n`);
      process.stderr.write(`${problems.length} record file(s) in ${root} cannot be parsed; their runs and tasks are shown as corrupt\n`);
    }
    if (problems.length) process.exitCode = 1;
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--config <path>', description: 'config file whose storage.runs_dir is the root (default: ./config.yaml, ./config.yml, then ~/.run-agent/conductor-loop.hcl)' })
  parseConfig(v: string): string {
    return v;
  }

  @Option({ flags: '--json', description: 'print {root, problems: [{path, kind, reason}]} as JSON' })
  parseJson(): boolean {
    return true;
  }
}
