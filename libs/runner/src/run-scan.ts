import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isZeroTime, readRunInfo, RunInfo, runInfoFile, runInfoIn, taskRunsDir } from '@app/storage';

export interface ScannedRun {
  dir: string;
  info: RunInfo;
}

/** `<root>/<p>/<t>/runs/<r>` → `<root>`. */
export function rootOfRunDir(runDir: string): string {
  return dirname(dirname(dirname(dirname(runDir))));
}

export function isUnfinished(info: RunInfo): boolean {
  return info.status === 'running' && isZeroTime(info.end_time);
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
}

/** Runs of one task folder with a readable run-info.yaml (raw, no reconciliation). */
export function taskRuns(taskDir: string): ScannedRun[] {
  const runsDir = taskRunsDir(taskDir);
  const out: ScannedRun[] = [];
  for (const id of safeList(runsDir)) {
    const dir = join(runsDir, id);
    const path = runInfoFile(dir);
    if (!existsSync(path)) continue;
    try {
      out.push({ dir, info: readRunInfo(path) });
    } catch {
      // a run-info being rewritten or corrupt is skipped; callers only need the readable ones
    }
  }
  return out;
}

/** The newest run of a task whose stored status is running (only run `runId` when given): its folder. */
export function findRunningRun(taskDir: string, runId?: string): string | undefined {
  return taskRuns(taskDir)
    .reverse()
    .find((r) => (!runId || basename(r.dir) === runId) && r.info.status === 'running')?.dir;
}

/** Every readable run under the runs root. */
export function allRuns(root: string): ScannedRun[] {
  const out: ScannedRun[] = [];
  for (const project of safeList(root)) {
    for (const task of safeList(join(root, project))) {
      if (task === 'runs') continue;
      out.push(...taskRuns(join(root, project, task)));
    }
  }
  return out;
}

/** Runs whose parent_run_id chain leads to `runId` (not including it). */
export function descendantRuns(runs: ScannedRun[], runId: string): ScannedRun[] {
  const byParent = new Map<string, ScannedRun[]>();
  for (const r of runs) {
    const parent = r.info.parent_run_id;
    if (!parent) continue;
    byParent.set(parent, [...(byParent.get(parent) ?? []), r]);
  }
  const out: ScannedRun[] = [];
  const seen = new Set<string>([runId]);
  const queue = [runId];
  while (queue.length > 0) {
    for (const child of byParent.get(queue.shift()!) ?? []) {
      if (seen.has(child.info.run_id)) continue;
      seen.add(child.info.run_id);
      out.push(child);
      queue.push(child.info.run_id);
    }
  }
  return out;
}

/** Finds a run by id: first in the given task, then anywhere under the root. */
export function findRunById(root: string, runId: string, taskDir?: string): ScannedRun | undefined {
  if (taskDir) {
    const local = runInfoIn(taskRunsDir(taskDir), runId);
    if (existsSync(local)) {
      try {
        return { dir: dirname(local), info: readRunInfo(local) };
      } catch {
        return undefined;
      }
    }
  }
  return allRuns(root).find((r) => r.info.run_id === runId);
}
