import { existsSync } from 'node:fs';
import { hasDoneFile, StorageIndex, ZERO_TIME } from '@app/storage';
import type { SubTaskStarter } from './mcp.types';
import { runOutputUri } from './resource-uris';

export type TaskState = 'pending' | 'running' | 'completed' | 'failed' | 'done';

export interface RunSummary {
  run_id: string;
  status: string;
  exit_code: number | null;
  agent: string;
  parent_run_id?: string;
  start_time?: string;
  end_time?: string;
  error_summary?: string;
  output_uri: string;
}

export interface TaskSummary {
  project_id: string;
  task_id: string;
  /** done: DONE written; completed/failed: the last run ended so and nothing runs; running; pending: no run yet. */
  state: TaskState;
  finished: boolean;
  done: boolean;
  runs: RunSummary[];
  error?: string;
}

/** Project folders as the API lists them: dot- and underscore-folders (`_audit`) are not projects. */
export function visibleProjects(index: StorageIndex): string[] {
  return index.listProjects();
}

const iso = (d: Date): string | undefined => (d.getTime() === ZERO_TIME.getTime() ? undefined : d.toISOString());

/** The state of a task from its files (reconciled run-infos, DONE) and what this process still runs. */
export function taskSummary(index: StorageIndex, starter: SubTaskStarter, projectId: string, taskId: string): TaskSummary {
  const taskDir = index.layout.taskDir(projectId, taskId);
  const exists = existsSync(taskDir);
  const runs: RunSummary[] = [];
  let starting = false;
  for (const runId of exists ? index.listRuns(projectId, taskId) : []) {
    const info = index.runInfo(projectId, taskId, runId);
    if (!info) {
      starting = true;
      continue;
    }
    runs.push({
      run_id: runId,
      status: info.status,
      exit_code: info.status === 'running' ? null : info.exit_code,
      agent: info.agent,
      parent_run_id: info.parent_run_id || undefined,
      start_time: iso(info.start_time),
      end_time: iso(info.end_time),
      error_summary: info.error_summary || undefined,
      output_uri: runOutputUri(projectId, taskId, runId),
    });
  }
  const failure = starter.failure(projectId, taskId);
  const done = exists && hasDoneFile(taskDir);
  const running = runs.some((r) => r.status === 'running') || (starter.isActive(projectId, taskId) && !failure) || (starting && !failure);
  let state: TaskState;
  if (running) state = 'running';
  else if (done) state = 'done';
  else if (failure) state = 'failed';
  else if (runs.length === 0) state = 'pending';
  else state = runs.at(-1)!.status === 'completed' ? 'completed' : 'failed';
  const summary: TaskSummary = { project_id: projectId, task_id: taskId, state, finished: state !== 'running' && state !== 'pending', done, runs };
  if (failure) summary.error = failure;
  if (!exists && !failure) summary.error = 'task not found';
  return summary;
}
