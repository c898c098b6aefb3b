import { startTaskLoop as startLoop, type TaskLoopSpawn } from '@app/runner';
import { TASK_BUS_FILE } from '@app/storage';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from '../../common/cli-errors';
import { packageRoot } from '../../version';


/** <root>/<project>/<task>/TASK-MESSAGE-BUS.md → the task folder and the runs root. */
export function taskOfBus(busPath: string): { taskDir: string; root: string } {
  if (basename(busPath) !== TASK_BUS_FILE) throw new UsageError(`a task is needed (give --project and --task, or run inside a task); bus ${busPath} is not a task bus`);
  const taskDir = dirname(resolve(busPath));
  return { taskDir, root: dirname(dirname(taskDir)) };
}

/** Starts a detached loop of the task through this installation's run-agent (see the runner's startTaskLoop). */
export function startTaskLoop(opts: Omit<TaskLoopSpawn, 'cli'>): Promise<number> {
  return startLoop({ ...opts, cli: join(packageRoot(), 'bin', 'run-agent') });
}
