import { spawn } from 'node:child_process';

/** The pid of a real process that has exited and been reaped (so kill(pid, 0) fails). */
export async function deadPid(): Promise<number> {
  const child = spawn('true', [], { stdio: 'ignore' });
  const pid = child.pid as number;
  await new Promise((resolve) => child.on('close', resolve));
  return pid;
}
