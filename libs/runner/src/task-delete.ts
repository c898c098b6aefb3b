import { existsSync, rmSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { findRunningRun } from './run-scan';

/**
 * `run-agent task delete`: refuses a missing task folder, and a task with a running run unless
 * `force`, which stops the task's runs first (through the caller's stopper, the injected
 * RunnerService); then removes the task folder with all its runs.
 */
export async function deleteTaskFolder(taskDir: string, opts: { force?: boolean; stopTask: (taskDir: string) => Promise<unknown> }): Promise<void> {
  if (!existsSync(taskDir)) throw new Error(`task not found: ${basename(dirname(taskDir))}/${basename(taskDir)}`);
  const running = findRunningRun(taskDir);
  if (running && !opts.force) throw new Error(`task ${basename(taskDir)} has a running run (${basename(running)}); use --force to delete anyway`);
  if (running) await opts.stopTask(taskDir);
  rmSync(taskDir, { recursive: true, force: true });
}
