import { spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * Starts a detached Ralph loop of an existing task (`<cli> task …`, prompt from TASK.md): used
 * when a message wakes a finished task and no loop holds its TASK.lock. `cli` is the run-agent
 * script (the app knows where it is installed). Returns the loop's pid.
 */
export function spawnTaskLoop(cli: string, root: string, projectId: string, taskId: string, agent: string | undefined): number | undefined {
  const args = [cli, 'task', '--root', root, '--project', projectId, '--task', taskId];
  if (agent) args.push('--agent', agent);
  const child = spawn(process.execPath, args, { detached: true, stdio: 'ignore', cwd: join(root, projectId, taskId) });
  child.unref();
  return child.pid;
}
