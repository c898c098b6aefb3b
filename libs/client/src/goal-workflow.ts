import type { GoalWorkflowSpec } from '@app/orchestration';
import type { CreateTaskRequest, StagePlan } from './goal-workflow-plan';
import { ClientOptions, out } from './output';
import { parseJson, ServerClient } from './server-client';

export interface CreatedTask {
  task_id: string;
  run_id?: string;
  status?: string;
  queue_position?: number;
  depends_on: string[];
}

/** POSTs the requests one by one (dependencies first); `onCreated` sees each answer as it comes. */
async function createTasks(client: ServerClient, requests: CreateTaskRequest[], onCreated: (t: CreatedTask) => void): Promise<CreatedTask[]> {
  const created: CreatedTask[] = [];
  for (const body of requests) {
    const res = await client.call('POST', '/api/v1/tasks', { body });
    const answer = parseJson<{ run_id?: string; status?: string; queue_position?: number }>(res.text);
    const task: CreatedTask = { task_id: body.task_id, run_id: answer.run_id, status: answer.status, depends_on: body.depends_on };
    if (answer.queue_position) task.queue_position = answer.queue_position;
    created.push(task);
    onCreated(task);
  }
  return created;
}

const createdLine = (t: CreatedTask): string => `created ${t.task_id} (status ${t.status ?? 'unknown'})\n`;

/** `conductor goal run`: creates the spec's tasks (requests from goalTaskRequests), one line per task or one JSON summary. */
export async function runGoalOnServer(client: ServerClient, spec: GoalWorkflowSpec, requests: CreateTaskRequest[], opts: ClientOptions): Promise<void> {
  const created = await createTasks(client, requests, (t) => void (opts.json || out(createdLine(t))));
  if (opts.json) out(`${JSON.stringify({ workflow_id: spec.workflow_id, project_id: requests[0].project_id, server: client.base, tasks: created }, null, 2)}\n`);
}

/** `conductor workflow run`: creates the stage tasks of `plan` (workflowStagePlan), or with dryRun prints the plan only. */
export async function runWorkflowOnServer(client: ServerClient, plan: StagePlan[], opts: ClientOptions & { task?: string; dryRun?: boolean }): Promise<void> {
  const stageOf = new Map(plan.map((p) => [p.request.task_id, p]));
  const summary = (t: Omit<CreatedTask, 'depends_on'> & { depends_on: string[] }) => ({ stage: stageOf.get(t.task_id)!.stage, name: stageOf.get(t.task_id)!.name, ...t });
  const head = { project_id: plan[0].request.project_id, task_id: opts.task!.trim(), template: 'THE_PROMPT_v5', from_stage: plan[0].stage, to_stage: plan[plan.length - 1].stage };
  if (opts.dryRun) {
    if (opts.json) {
      const stages = plan.map((p) => summary({ task_id: p.request.task_id, depends_on: p.request.depends_on }));
      out(`${JSON.stringify({ ...head, dry_run: true, agent: plan[0].request.agent_type, stages }, null, 2)}\n`);
      return;
    }
    for (const p of plan) {
      const deps = p.request.depends_on.length ? ` (depends on: ${p.request.depends_on.join(', ')})` : '';
      out(`plan stage ${p.stage} ${p.name}: ${p.request.task_id}${deps}\n`);
    }
    out(`dry run: ${plan.length} stage task(s) for agent ${plan[0].request.agent_type}; nothing was sent to the server\n`);
    return;
  }
  const created = await createTasks(
    client,
    plan.map((p) => p.request),
    (t) => void (opts.json || out(createdLine(t))),
  );
  if (opts.json) out(`${JSON.stringify({ ...head, dry_run: false, server: client.base, stages: created.map(summary) }, null, 2)}\n`);
}
