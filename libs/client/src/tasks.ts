import type { FlatRun, Paginated, TaskListItem } from '@app/contracts';
import { formatLocal, formatRfc3339, formatRunDuration, isZeroTime, tabulate } from './format';
import { streamTaskLogs } from './logs';
import { oneArg, out, printRaw, ProjectOptions, requireFlag } from './output';
import { expectStatus, parseJson, query, seg, ServerClient, ServerClientError } from './server-client';

export interface TaskDetail {
  project_id: string;
  task_id: string;
  status: string;
  last_activity?: string;
  depends_on?: string[];
  blocked_by?: string[];
  runs?: { run_id: string; status: string; start_time: string; end_time?: string; exit_code?: number }[];
}

export async function taskStatus(client: ServerClient, args: string[], opts: ProjectOptions): Promise<void> {
  const task = oneArg(args);
  const { data: t, text } = await client.getJson<TaskDetail>(`/api/v1/tasks/${seg(task)}${query({ project_id: opts.project })}`);
  if (opts.json) return printRaw(text);
  out(`Task:   ${t.project_id}/${t.task_id}\nStatus: ${t.status}\n`);
  if (t.depends_on?.length) out(`Depends on: ${t.depends_on.join(', ')}\n`);
  if (t.blocked_by?.length) out(`Blocked by: ${t.blocked_by.join(', ')}\n`);
  if (!isZeroTime(t.last_activity)) out(`Last activity: ${formatRfc3339(t.last_activity!)}\n`);
  const runs = t.runs ?? [];
  if (runs.length === 0) return;
  const rows = [['RUN ID', 'STATUS', 'START TIME', 'END TIME', 'EXIT CODE']];
  for (const r of runs) {
    const ended = !isZeroTime(r.end_time);
    rows.push([r.run_id, r.status, formatRfc3339(r.start_time), ended ? formatRfc3339(r.end_time!) : '-', ended ? String(r.exit_code ?? 0) : '-']);
  }
  out('\n' + tabulate(rows));
}

export async function stopTask(client: ServerClient, args: string[], opts: ProjectOptions): Promise<void> {
  const task = oneArg(args);
  const res = await client.call('DELETE', `/api/v1/tasks/${seg(task)}${query({ project_id: opts.project })}`, { expect: [202] });
  if (opts.json) return printRaw(res.text);
  out(`Task ${task}: stopped ${parseJson<{ stopped_runs: number }>(res.text).stopped_runs} run(s)\n`);
}

export interface TaskListOptions extends ProjectOptions {
  status?: string;
  limit?: number;
  offset?: number;
}

export type TaskListResponse = Paginated<TaskListItem>;

export async function listTasks(client: ServerClient, _args: string[], opts: TaskListOptions): Promise<void> {
  const project = requireFlag(opts.project, 'project');
  const { data, text } = await client.getJson<TaskListResponse>(`/api/projects/${seg(project)}/tasks${query({ status: opts.status, limit: opts.limit, offset: opts.offset })}`);
  if (opts.json) return printRaw(text);
  const rows = [['TASK ID', 'STATUS', 'RUNS', 'BLOCKED_BY', 'LAST ACTIVITY']];
  for (const t of data.items ?? []) {
    rows.push([t.id, t.status, String(t.run_count), t.blocked_by?.length ? t.blocked_by.join(',') : '-', isZeroTime(t.last_activity) ? '-' : formatLocal(t.last_activity!)]);
  }
  out(tabulate(rows));
  if (data.has_more) out(`(showing ${data.items.length} of ${data.total} tasks from ${data.offset}; use --limit (up to 500) and --offset to see more)\n`);
}

export async function deleteTask(client: ServerClient, args: string[], opts: ProjectOptions): Promise<void> {
  const task = oneArg(args);
  const project = requireFlag(opts.project, 'project');
  const res = await client.send('DELETE', `/api/projects/${seg(project)}/tasks/${seg(task)}`);
  if (res.status === 204) {
    out(opts.json ? `${JSON.stringify({ task_id: task, deleted: true })}\n` : `Task ${task} deleted.\n`);
    return;
  }
  if (res.status === 409) throw new ServerClientError(`task ${task} has running runs; stop them first`, 409);
  if (res.status === 404) throw new ServerClientError(`task ${task} not found in project ${project}`, 404);
  expectStatus(res, [204]);
}

export async function resumeTask(client: ServerClient, args: string[], opts: ProjectOptions): Promise<void> {
  const task = oneArg(args);
  const project = requireFlag(opts.project, 'project');
  const res = await client.send('POST', `/api/projects/${seg(project)}/tasks/${seg(task)}/resume`);
  if (res.status === 404) throw new ServerClientError(`task ${task} not found in project ${project}`, 404);
  if (res.status === 400) throw new ServerClientError(`cannot resume task ${task}: ${res.text.trim()}`, 400);
  expectStatus(res, [200]);
  if (opts.json) return printRaw(res.text);
  const r = parseJson<{ project_id: string; task_id: string }>(res.text);
  out(`Task ${r.project_id}/${r.task_id} resumed (DONE file removed)\n`);
}

export interface LogsOptions extends ProjectOptions {
  run?: string;
  follow?: boolean;
  tail?: number;
}

export async function taskLogs(client: ServerClient, args: string[], opts: LogsOptions): Promise<void> {
  const task = oneArg(args);
  const project = requireFlag(opts.project, 'project');
  await streamTaskLogs(client, { project, task, run: opts.run, follow: !!opts.follow, tail: opts.tail ?? 0 });
}

export interface RunsOptions extends ProjectOptions {
  limit?: number;
}

export type RunsResponse = Paginated<FlatRun>;

export async function taskRuns(client: ServerClient, args: string[], opts: RunsOptions): Promise<void> {
  const task = oneArg(args);
  const project = requireFlag(opts.project, 'project');
  const path = `/api/projects/${seg(project)}/tasks/${seg(task)}/runs${query({ limit: opts.limit ?? 50 })}`;
  const res = await client.send('GET', path);
  if (res.status === 404) throw new ServerClientError(`task ${task} not found in project ${project}`, 404);
  expectStatus(res, [200]);
  if (opts.json) return printRaw(res.text);
  const data = parseJson<RunsResponse>(res.text);
  if (!data.items?.length) return out(`no runs found for task ${task}\n`);
  const rows = [['RUN ID', 'AGENT', 'STATUS', 'EXIT', 'DURATION', 'STARTED', 'ERROR']];
  for (const r of data.items) {
    const ended = !isZeroTime(r.end_time);
    rows.push([r.id, r.agent, r.status, ended ? String(r.exit_code) : '-', formatRunDuration(r.start_time, r.end_time), formatLocal(r.start_time, true), (r.error_summary ?? '').slice(0, 40)]);
  }
  out(tabulate(rows));
  if (data.has_more) out(`(showing ${data.items.length} of ${data.total} runs; use --limit to see more)\n`);
}

export interface PullRequestOptions extends ProjectOptions {
  repository?: string;
  remote?: string;
  base?: string;
}

/** `conductor task pull-request`: the merge's pull-request mode (docs/triggers.md). */
export async function taskPullRequest(client: ServerClient, args: string[], opts: PullRequestOptions): Promise<void> {
  const task = oneArg(args);
  const project = requireFlag(opts.project, 'project');
  const body = { ...(opts.repository ? { repository: opts.repository } : {}), ...(opts.remote ? { remote: opts.remote } : {}), ...(opts.base ? { base: opts.base } : {}) };
  const res = expectStatus(await client.send('POST', `/api/projects/${seg(project)}/tasks/${seg(task)}/pull-request`, body));
  if (opts.json) return printRaw(res.text);
  const r = parseJson<{ outcome: string; number?: number; url?: string; ready?: boolean }>(res.text);
  if (!r.number) return out(`Task ${project}/${task}: ${r.outcome.replace(/_/g, ' ')} (no pull request yet)\n`);
  out(`Pull request #${r.number} ${r.outcome} (${r.ready ? 'ready for review' : 'draft'}): ${r.url ?? ''}\n`);
}
