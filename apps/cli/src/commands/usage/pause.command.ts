import { Command, CommandRunner, Option } from 'nest-commander';
import { pause, unpause } from '@app/runner';
import { UsageError } from '../../common/cli-errors';
import { resolveRoot } from '../engine/support/runs-root';

interface PauseFlags {
  root?: string;
  project?: string;
  task?: string;
}

function target(flags: PauseFlags): { root: string; projectId: string; taskId?: string } {
  const projectId = flags.project?.trim();
  if (!projectId) throw new UsageError('--project is required');
  return { root: resolveRoot(flags.root), projectId, taskId: flags.task?.trim() || undefined };
}

abstract class PauseFlagParsers extends CommandRunner {
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
    const t = target(flags);
    const changed = pause(t, `run-agent pause (pid ${process.pid})`);
    process.stdout.write(`${t.taskId ?? t.projectId}: ${changed ? 'paused' : 'already paused'}\n`);
  }
}

@Command({ name: 'unpause', description: 'Release a task (or a project) held by `pause`; its waiting loop starts the next attempt.' })
export class UnpauseCommand extends PauseFlagParsers {
  async run(_args: string[], flags: PauseFlags = {}): Promise<void> {
    const t = target(flags);
    const changed = unpause(t);
    process.stdout.write(`${t.taskId ?? t.projectId}: ${changed ? 'unpaused' : 'was not paused'}\n`);
  }
}
