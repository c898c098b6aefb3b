import { closeSync, existsSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BusMessage, BusWriter } from '@app/messagebus';
import { readRunInfo, removeDone, removeStopRequested, runInfoIn, RunsLayout, tryFlock, unflock, validateProjectId, validateTaskId, taskRunsDir } from '@app/storage';
import { RunnerError } from '../runner.errors';
import { RESUME_META_KEY } from './context';

export interface WakeOptions {
  root: string;
  projectId: string;
  taskId: string;
  body: string;
  type?: string;
  runId?: string;
  parents?: string[];
  /** Extra header meta (scale-out marks a routed write with its id). */
  meta?: Record<string, string>;
}

export interface WakeResult {
  message: BusMessage;
  /** DONE was present and removed. */
  reopened: boolean;
  /** A Ralph loop of this task holds TASK.lock (it will pick the message up; no new loop needed). */
  loopRunning: boolean;
  /** Agent of the latest run (to start a new loop with), when known. */
  agent?: string;
}

/** True when a Ralph loop of the task holds <task>/TASK.lock (the loop takes it exclusively). */
export function isTaskLoopRunning(taskDir: string): boolean {
  const path = join(taskDir, 'TASK.lock');
  if (!existsSync(path)) return false;
  const fd = openSync(path, 'r');
  try {
    if (!tryFlock(fd, 'sh')) return true;
    unflock(fd);
    return false;
  } finally {
    closeSync(fd);
  }
}

/** Agent of the task's latest run with a readable run-info.yaml. */
export function latestAgentOf(taskDir: string): string | undefined {
  const runs = taskRunsDir(taskDir);
  if (!existsSync(runs)) return undefined;
  for (const r of readdirSync(runs).sort().reverse()) {
    try {
      return readRunInfo(runInfoIn(runs, r)).agent || undefined;
    } catch {
      continue;
    }
  }
  return undefined;
}

/**
 * Wakes a task with new context (a PR review, a CI failure): posts the message marked `resume`
 * (the next run's prompt starts with it), then removes DONE and a non-permanent stop marker.
 * Posting first means a crash in between leaves a message that the next loop still reads.
 * Starting a loop when none runs is the caller's job (the API launches one, the CLI spawns one).
 */
export async function wakeTask(opts: WakeOptions): Promise<WakeResult> {
  validateProjectId(opts.projectId);
  validateTaskId(opts.taskId);
  if (!opts.body.trim()) throw new RunnerError('INVALID_INPUT', 'message body is empty');
  const layout = new RunsLayout(opts.root);
  const taskDir = layout.taskDir(opts.projectId, opts.taskId);
  if (!existsSync(join(taskDir, 'TASK.md'))) throw new RunnerError('NOT_FOUND', `task ${opts.taskId} has no TASK.md; nothing to resume`);
  const busPath = layout.taskBus(opts.projectId, opts.taskId);
  mkdirSync(dirname(busPath), { recursive: true });
  const writer = new BusWriter(busPath);
  let message: BusMessage;
  try {
    message = await writer.append({
      type: opts.type?.trim() || 'USER',
      project_id: opts.projectId,
      task_id: opts.taskId,
      run_id: opts.runId ?? '',
      parents: opts.parents?.length ? opts.parents.map((id) => ({ msg_id: id })) : undefined,
      meta: { ...opts.meta, [RESUME_META_KEY]: 'true' },
      body: opts.body,
    });
  } finally {
    writer.close();
  }
  const reopened = removeDone(taskDir);
  removeStopRequested(taskDir);
  return { message, reopened, loopRunning: isTaskLoopRunning(taskDir), agent: latestAgentOf(taskDir) };
}
