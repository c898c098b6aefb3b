import { randomBytes } from 'node:crypto';
import { UsageError } from '@app/boot';
import type { CreateTaskResponse, RunV1 } from '@app/contracts';
import { readUserFile } from '@app/storage';
import { formatRfc3339, isZeroTime, tabulate } from './format';
import { streamTaskLogs, waitForRunStart } from './logs';
import { out, printRaw, ProjectOptions, requireFlag } from './output';
import { parseJson, query, seg, ServerClient } from './server-client';
import { sleep } from './sse';

/** `task-<UTC YYYYMMDD>-<HHMMSS>-<6 hex>` as upstream's client generates. */
export function generateClientTaskId(now = new Date()): string {
  const iso = now.toISOString();
  return `task-${iso.slice(0, 10).replace(/-/g, '')}-${iso.slice(11, 19).replace(/:/g, '')}-${randomBytes(3).toString('hex')}`;
}

export function loadPrompt(prompt?: string, promptFile?: string): string {
  if (prompt && promptFile) throw new UsageError('--prompt and --prompt-file are mutually exclusive');
  if (prompt) return prompt;
  if (promptFile) {
    let text: string;
    try {
      text = readUserFile(promptFile);
    } catch (err) {
      throw new UsageError(`read prompt file: ${(err as Error).message}`);
    }
    if (text.trim() === '') throw new UsageError(`prompt file "${promptFile}" is empty`);
    return text;
  }
  throw new UsageError('one of --prompt or --prompt-file is required');
}

export interface SubmitOptions extends ProjectOptions {
  task?: string;
  agent?: string;
  prompt?: string;
  promptFile?: string;
  projectRoot?: string;
  attachMode?: string;
  dependsOn?: string[];
  wait?: boolean;
  follow?: boolean;
}

export type CreateResponse = CreateTaskResponse;

function pollIntervalMs(): number {
  const ms = Number(process.env.CONDUCTOR_CLIENT_POLL_MS);
  return Number.isFinite(ms) && ms > 0 ? ms : 2000;
}

export async function submitJob(client: ServerClient, _args: string[], opts: SubmitOptions): Promise<void> {
  const project = requireFlag(opts.project, 'project');
  const agent = requireFlag(opts.agent, 'agent');
  const body: Record<string, unknown> = {
    project_id: project,
    task_id: opts.task || generateClientTaskId(),
    agent_type: agent,
    prompt: loadPrompt(opts.prompt, opts.promptFile),
  };
  if (opts.projectRoot) body.project_root = opts.projectRoot;
  body.attach_mode = opts.attachMode ?? 'create';
  if (opts.dependsOn?.length) body.depends_on = opts.dependsOn;
  const res = await client.call('POST', '/api/v1/tasks', { body, expect: [201] });
  const created = parseJson<CreateResponse>(res.text);
  if (opts.json) return printRaw(res.text);
  out(`Task created: ${created.task_id}, run_id: ${created.run_id}\n`);
  if (created.status === 'queued') out(`Queued for root-task capacity (position ${created.queue_position ?? '?'}).\n`);
  if (opts.follow) {
    const runId = await waitForRunStart(client, created.project_id, created.task_id, 30_000 + queuedGraceMs(created), Math.min(1000, pollIntervalMs()));
    await streamTaskLogs(client, { project: created.project_id, task: created.task_id, run: runId, follow: true, tail: 0 });
    return;
  }
  if (opts.wait) await waitForRun(client, created.run_id);
}

/** A queued task may wait long for a slot; --follow keeps waiting for its first run meanwhile. */
function queuedGraceMs(created: CreateResponse): number {
  return created.status === 'queued' ? 24 * 3600_000 : 0;
}

export async function waitForRun(client: ServerClient, runId: string): Promise<void> {
  out(`Waiting for run ${runId} to complete...\n`);
  for (;;) {
    const { data } = await client.getJson<RunV1>(`/api/v1/runs/${seg(runId)}`);
    if (!isZeroTime(data.end_time)) {
      out(`Run ${runId} completed: status=${data.status} exit_code=${data.exit_code ?? 0}\n`);
      return;
    }
    await sleep(pollIntervalMs());
  }
}

export async function listJobs(client: ServerClient, _args: string[], opts: ProjectOptions): Promise<void> {
  // every page (issue #29); --json prints them as one `{"tasks": [...]}`
  const tasks = await client.getAllPages<{ project_id: string; task_id: string; status: string; last_activity?: string }>(`/api/v1/tasks${query({ project_id: opts.project })}`, 'tasks');
  if (opts.json) return printRaw(JSON.stringify({ tasks }));
  if (tasks.length === 0) return out('No tasks found.\n');
  const rows = [['PROJECT', 'TASK', 'STATUS', 'LAST ACTIVITY']];
  for (const t of tasks) rows.push([t.project_id, t.task_id, t.status, isZeroTime(t.last_activity) ? '-' : formatRfc3339(t.last_activity!)]);
  out(tabulate(rows));
}
