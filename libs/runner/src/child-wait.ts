import { join } from 'node:path';
import { LivenessProbe, RunInfo, updateRunInfo } from '@app/storage';
import { formatGoDuration } from './go-duration';
import { errorText } from './runner.errors';
import { isUnfinished, taskRuns } from './run-scan';
import { sleep } from './sleep';

export interface ChildWaitOptions {
  taskDir: string;
  timeoutMs: number;
  pollMs: number;
  probe: LivenessProbe;
  signal?: AbortSignal;
  post(type: string, body: string): Promise<void>;
}

interface Child {
  id: string;
  dir: string;
  pgid: number;
}

/** A dead child whose run-info still says running is marked failed (§1.4 healing). */
async function heal(dir: string): Promise<void> {
  await updateRunInfo(join(dir, 'run-info.yaml'), (i: RunInfo) => {
    if (!isUnfinished(i)) return i;
    i.end_time = new Date();
    if (i.exit_code === 0) i.exit_code = -1;
    i.status = 'failed';
    return i;
  }).catch(() => undefined);
}

function isAlive(probe: LivenessProbe, pgid: number): boolean {
  try {
    return probe.isGroupAlive(pgid);
  } catch {
    return true;
  }
}

/** Unfinished runs of the task with a parent (root runs are never children) and a live group. */
export async function findActiveChildren(taskDir: string, probe: LivenessProbe): Promise<Child[]> {
  const active: Child[] = [];
  for (const r of taskRuns(taskDir)) {
    if (!isUnfinished(r.info) || !r.info.parent_run_id) continue;
    const pgid = r.info.pgid > 0 ? r.info.pgid : r.info.pid;
    if (pgid > 0 && isAlive(probe, pgid)) active.push({ id: r.info.run_id, dir: r.dir, pgid });
    else await heal(r.dir);
  }
  return active;
}

/** handleDone (runner-agents.md §1.4): wait for live child runs, bounded by the timeout. */
export async function waitForChildren(opts: ChildWaitOptions): Promise<'completed' | 'aborted'> {
  let children: Child[];
  try {
    children = await findActiveChildren(opts.taskDir, opts.probe);
  } catch (err) {
    await opts.post('WARNING', `failed to enumerate children: ${errorText(err)}`);
    children = [];
  }
  if (children.length === 0) {
    await opts.post('INFO', 'task completed (DONE marker present, no active children)');
    return 'completed';
  }
  const ids = (list: Child[]): string => `[${list.map((c) => c.id).filter(Boolean).join(' ')}]`;
  await opts.post('INFO', `waiting for ${children.length} children to complete: ${ids(children)}`);
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const remaining: Child[] = [];
    for (const c of children) {
      if (isAlive(opts.probe, c.pgid)) remaining.push(c);
      else await heal(c.dir);
    }
    children = remaining;
    if (children.length === 0) {
      await opts.post('INFO', 'task completed (all children finished)');
      return 'completed';
    }
    if (Date.now() > deadline) {
      await opts.post('WARNING', `timeout waiting for children after ${formatGoDuration(opts.timeoutMs)}: ${ids(children)}`);
      return 'completed';
    }
    if (!(await sleep(Math.min(opts.pollMs, Math.max(1, deadline - Date.now() + 1)), opts.signal))) {
      await opts.post('ERROR', 'failed waiting for children: context canceled');
      return 'aborted';
    }
  }
}
