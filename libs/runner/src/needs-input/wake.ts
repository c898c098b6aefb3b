import { closeSync, existsSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { BusMessage, BusWriters } from '@app/messagebus';
import { readRunInfo, removeDone, removeStopRequested, runInfoIn, type RunsLayout, tryFlock, unflock, validateProjectId, validateTaskId, taskRunsDir, DONE_FILE, TASK_PROMPT_FILE } from '@app/storage';
import { RunnerError } from '../runner.errors';
import { RESUME_META_KEY } from './context';
import { TASK_LOCK_FILE } from '../task-lock';

export interface WakeOptions {
  /** The runs root's layout and the bus-writer factory (of the composition root). */
  layout: RunsLayout;
  writers: BusWriters;
  projectId: string;
  taskId: string;
  body: string;
  type?: string;
  runId?: string;
  parents?: string[];
  /** Extra header meta (scale-out marks a routed write with its id). */
  meta?: Record<string, string>;
  /**
   * Set DONE aside instead of deleting it, so a caller whose loop then fails to start can put the
   * very same file back (`undo`: its completion key is unchanged) or drop it (`settle`).
   */
  reversible?: boolean;
}

export interface WakeResult {
  message: BusMessage;
  /** DONE was present and removed. */
  reopened: boolean;
  /** A Ralph loop of this task holds TASK.lock (it will pick the message up; no new loop needed). */
  loopRunning: boolean;
  /** The configured agent (name, else type) of the latest root run: the one to start a new loop with. */
  agent?: string;
  /** Working directory of the latest root run, when it still exists. */
  cwd?: string;
  /** With `reversible`: puts DONE back when no loop could be started. */
  undo(): void;
  /** With `reversible`: the loop runs, DONE is gone for good. */
  settle(): void;
}

/** True when a Ralph loop of the task holds <task>/TASK.lock (the loop takes it exclusively). */
export function isTaskLoopRunning(taskDir: string): boolean {
  const path = join(taskDir, TASK_LOCK_FILE);
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

/**
 * How the task's loop last ran: the configured agent (run-info `agent_name`, the config key; the
 * type only for records without it) and the working directory of its latest root run (sub-agent
 * runs of the task, with a parent_run_id, are not the loop's).
 */
export function latestRootRunOf(taskDir: string): { agent?: string; cwd?: string } {
  const runs = taskRunsDir(taskDir);
  if (!existsSync(runs)) return {};
  for (const r of readdirSync(runs).sort().reverse()) {
    let info;
    try {
      info = readRunInfo(runInfoIn(runs, r));
    } catch {
      continue;
    }
    if (info.parent_run_id) continue;
    const cwd = info.cwd && isDir(info.cwd) ? info.cwd : undefined;
    return { agent: info.agent_name || info.agent || undefined, cwd };
  }
  return {};
}

/** The agent to wake the task with (see latestRootRunOf). */
export function latestAgentOf(taskDir: string): string | undefined {
  return latestRootRunOf(taskDir).agent;
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** DONE moved to a hidden name in the task folder (same inode and mtime); undefined without DONE. */
function setDoneAside(taskDir: string): string | undefined {
  const done = join(taskDir, DONE_FILE);
  if (!existsSync(done)) return undefined;
  if (statSync(done).isDirectory()) throw new RunnerError('INVALID_INPUT', `DONE marker is a directory: ${done}`);
  const aside = join(taskDir, `.DONE.waking-${process.pid}`);
  renameSync(done, aside);
  return aside;
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
  const { layout } = opts;
  const taskDir = layout.taskDir(opts.projectId, opts.taskId);
  if (!existsSync(join(taskDir, TASK_PROMPT_FILE))) throw new RunnerError('NOT_FOUND', `task ${opts.taskId} has no TASK.md; nothing to resume`);
  const busPath = layout.taskBus(opts.projectId, opts.taskId);
  mkdirSync(dirname(busPath), { recursive: true });
  const writer = opts.writers(busPath);
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
  const aside = opts.reversible ? setDoneAside(taskDir) : undefined;
  const reopened = opts.reversible ? aside !== undefined : removeDone(taskDir);
  removeStopRequested(taskDir);
  const undo = (): void => {
    if (!aside || !existsSync(aside)) return;
    // an agent of the new loop may have written a DONE of its own meanwhile: that one stands
    if (existsSync(join(taskDir, DONE_FILE))) rmSync(aside, { force: true });
    else renameSync(aside, join(taskDir, DONE_FILE));
  };
  const settle = (): void => {
    if (aside) rmSync(aside, { force: true });
  };
  return { message, reopened, loopRunning: isTaskLoopRunning(taskDir), ...latestRootRunOf(taskDir), undo, settle };
}
