import { spawn } from 'node:child_process';
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

/**
 * Starts a detached Ralph loop of an existing task (`run-agent task`, prompt from TASK.md): used
 * when a message wakes a finished task and no loop holds its TASK.lock. Returns the loop's pid.
 */
export function spawnTaskLoop(root: string, projectId: string, taskId: string, agent: string | undefined): number | undefined {
  const cli = join(packageRoot(), 'bin', 'run-agent');
  const args = [cli, 'task', '--root', root, '--project', projectId, '--task', taskId];
  if (agent) args.push('--agent', agent);
  const child = spawn(process.execPath, args, { detached: true, stdio: 'ignore', cwd: join(root, projectId, taskId) });
  child.unref();
  return child.pid;
}
