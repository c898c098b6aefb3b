import { goalDigest, GoalWorkflowSpec, goalTaskPrompt, goalTextFromSource, normalizeGoalText, normalizeWorkflowTemplate, validateStageRange, WORKFLOW_MAX_STAGE, WORKFLOW_MIN_STAGE, WORKFLOW_STAGE_TITLES, workflowStagePrompt } from '@app/orchestration';
import { validateProjectId, validateTaskId } from '@app/storage';
import { UsageError } from '@app/boot';
import type { CreateTaskRequest as ContractCreateTaskRequest } from '@app/contracts';

/** The body of one `POST /api/v1/tasks`. */
export type CreateTaskRequest = ContractCreateTaskRequest & { depends_on: string[] };

/**
 * The spec's tasks in dependency order (every task after all of its dependencies; spec order among
 * ready tasks), so the server never sees a dependency it does not know yet.
 */
export function dependencyOrder(spec: GoalWorkflowSpec): GoalWorkflowSpec['tasks'] {
  const pending = [...spec.tasks];
  const placed = new Set<string>();
  const ordered: GoalWorkflowSpec['tasks'] = [];
  while (pending.length) {
    const next = pending.findIndex((t) => (t.depends_on ?? []).every((d) => placed.has(d)));
    if (next < 0) throw new UsageError(`spec ${spec.workflow_id}: dependency cycle among ${pending.map((t) => t.task_id).join(', ')}`);
    const [task] = pending.splice(next, 1);
    placed.add(task.task_id);
    ordered.push(task);
  }
  return ordered;
}

export function goalMatchesSpec(spec: GoalWorkflowSpec, text: string): boolean {
  return goalDigest(spec.project_id, spec.strategy, spec.template, normalizeGoalText(text)) === spec.goal.digest_sha256;
}

/**
 * `conductor goal run`: the goal text given (it must match the spec digest), else the spec's goal
 * file while it still matches (as `run-agent goal run`); then one create request per task.
 */
export function goalRunRequests(spec: GoalWorkflowSpec, opts: { project?: string; agent?: string; goalText?: string }): CreateTaskRequest[] {
  if (opts.goalText !== undefined && !goalMatchesSpec(spec, opts.goalText)) throw new UsageError('the goal text does not match the spec (digest_sha256 differs)');
  const goalText = opts.goalText ?? goalTextFromSource(spec);
  const agent = opts.agent?.trim();
  if (opts.agent !== undefined && !agent) throw new UsageError('--agent must not be blank');
  return goalTaskRequests(spec, { projectId: opts.project?.trim() || spec.project_id, agent, goalText });
}

/** One create request per spec task, prompts as `run-agent goal run` writes them to TASK.md. */
export function goalTaskRequests(spec: GoalWorkflowSpec, opts: { projectId: string; agent?: string; goalText?: string }): CreateTaskRequest[] {
  const projectId = validateProjectId(opts.projectId);
  return dependencyOrder(spec).map((task) => ({
    project_id: projectId,
    task_id: task.task_id,
    agent_type: opts.agent || task.agent,
    prompt: goalTaskPrompt(spec, task, opts.goalText),
    depends_on: task.depends_on ?? [],
  }));
}

export interface StagePlan {
  stage: number;
  name: string;
  request: CreateTaskRequest;
}

/** `<task>-sNN`: a stage's own task id, checked against the task-id rule. */
export function stageTaskId(taskId: string, stage: number): string {
  const id = `${taskId}-s${String(stage).padStart(2, '0')}`;
  try {
    return validateTaskId(id);
  } catch (err) {
    throw new UsageError(`cannot derive stage task id from --task ${taskId}: ${(err as Error).message}`);
  }
}

/**
 * One task per THE_PROMPT_v5 stage, each depending on the previous stage's task. The prompt is the
 * local workflow's stage prompt; its task folder is the base task's, relative to the server's root.
 */
export function workflowStagePlan(opts: { projectId: string; taskId: string; agent: string; fromStage?: number; toStage?: number; template?: string }): StagePlan[] {
  const projectId = validateProjectId(opts.projectId);
  const taskId = validateTaskId(opts.taskId);
  const template = normalizeWorkflowTemplate(opts.template);
  const from = opts.fromStage ?? WORKFLOW_MIN_STAGE;
  const to = opts.toStage ?? WORKFLOW_MAX_STAGE;
  validateStageRange(from, to);
  const baseFolder = `${projectId}/${taskId} (under the conductor runs root)`;
  const plan: StagePlan[] = [];
  for (let stage = from; stage <= to; stage++) {
    const previous = plan[plan.length - 1];
    plan.push({
      stage,
      name: WORKFLOW_STAGE_TITLES[stage],
      request: {
        project_id: projectId,
        task_id: stageTaskId(taskId, stage),
        agent_type: opts.agent,
        prompt: workflowStagePrompt(template, stage, baseFolder),
        depends_on: previous ? [previous.request.task_id] : [],
      },
    });
  }
  return plan;
}
