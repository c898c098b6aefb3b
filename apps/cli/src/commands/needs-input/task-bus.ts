import { spawnTaskLoop as spawnLoop } from '@app/runner';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from '../../common/cli-errors';
import { packageRoot } from '../../version';

export const TASK_BUS_FILE = 'TASK-MESSAGE-BUS.md';

/** <root>/<project>/<task>/TASK-MESSAGE-BUS.md → the task folder and the runs root. */
export function taskOfBus(busPath: string): { taskDir: string; root: string } {
  if (basename(busPath) !== TASK_BUS_FILE) throw new UsageError(`a task is needed (give --project and --task, or run inside a task); bus ${busPath} is not a task bus`);
  const taskDir = dirname(resolve(busPath));
  return { taskDir, root: dirname(dirname(taskDir)) };
}

/** Starts a detached loop of the task through this installation's run-agent (see the runner's spawnTaskLoop). */
export function spawnTaskLoop(root: string, projectId: string, taskId: string, agent: string | undefined): number | undefined {
  return spawnLoop(join(packageRoot(), 'bin', 'run-agent'), root, projectId, taskId, agent);
}
