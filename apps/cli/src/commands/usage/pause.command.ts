import { Inject } from '@nestjs/common';
import { Command, CommandRunner, Option } from 'nest-commander';
import { pause, unpause, type PauseTarget } from '@app/runner';
import { STORAGE_INDEX_FACTORY, type StorageIndexFactory } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { resolveRoot } from '../engine/support/runs-root';

interface PauseFlags {
  root?: string;
  project?: string;
  task?: string;
}

abstract class PauseFlagParsers extends CommandRunner {
  constructor(@Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory) {
    super();
  }

  protected target(flags: PauseFlags): PauseTarget {
    const projectId = flags.project?.trim();
    if (!projectId) throw new UsageError('--project is required');
    return { layout: this.indexFor(resolveRoot(flags.root)).layout, projectId, taskId: flags.task?.trim() || undefined };
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--project <id>', description: 'project id' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--task <id>', description: 'one task (default: the whole project)' })
  parseTask(v: string): string {
    return v;
  }
}

@Command({
  name: 'pause',
  description:
    "Hold a task (or every task of a project): its Ralph loop finishes the running attempt but starts no new one until `unpause`. " +
    'Waiting is not counted as a restart.',
})
export class PauseCommand extends PauseFlagParsers {
  async run(_args: string[], flags: PauseFlags = {}): Promise<void> {
    const t = this.target(flags);
    const changed = pause(t, `run-agent pause (pid ${process.pid})`);
    process.stdout.write(`${t.taskId ?? t.projectId}: ${changed ? 'paused' : 'already paused'}\n`);
  }
}

@Command({ name: 'unpause', description: 'Release a task (or a project) held by `pause`; its waiting loop starts the next attempt.' })
export class UnpauseCommand extends PauseFlagParsers {
  async run(_args: string[], flags: PauseFlags = {}): Promise<void> {
    const t = this.target(flags);
    const changed = unpause(t);
    process.stdout.write(`${t.taskId ?? t.projectId}: ${changed ? 'unpaused' : 'was not paused'}\n`);
  }
}
