import { readUserFile } from '@app/storage';
import { goalDigest, normalizeGoalText, type GoalWorkflowSpec, type MaterializedGoalTask } from './goal-spec';
import type { GoalGraphResult } from './goal-graph';
import type { IterateResult } from './iterate';
import type { WorkflowResult } from './workflow';

/*
 * What `run-agent goal`, `workflow run` and `iterate` print about their results (the commands
 * parse flags, call the use case and write these strings).
 */

/** `goal decompose --run` / `goal run` without --start: the tasks created (JSON with --json). */
export function formatCreatedGoalTasks(root: string, spec: GoalWorkflowSpec, tasks: MaterializedGoalTask[], json: boolean): string {
  if (json) {
    return `${JSON.stringify({ workflow_id: spec.workflow_id, project_id: spec.project_id, root, tasks: tasks.map((t) => ({ task_id: t.taskId, task_dir: t.taskDir, created: t.created, depends_on: t.dependsOn })) }, null, 2)}\n`;
  }
  let out = '';
  for (const t of tasks) {
    const deps = t.dependsOn.length ? ` (depends on: ${t.dependsOn.join(', ')})` : '';
    out += `${t.created ? 'created' : 'kept   '} ${t.taskId}${deps}\n`;
  }
  out += `workflow ${spec.workflow_id}: ${tasks.length} task(s) in project ${spec.project_id} under ${root}\n`;
  out += `start each with: run-agent task --root ${root} --project ${spec.project_id} --task <task-id> (dependencies gate the order)\n`;
  return out;
}

/** `goal run --start --json`: each task's outcome. */
export function goalRunJson(root: string, spec: GoalWorkflowSpec, result: GoalGraphResult): string {
  const outcomes = spec.tasks.map((t) => ({ task_id: t.task_id, ...result.outcomes[t.task_id] }));
  return `${JSON.stringify({ workflow_id: spec.workflow_id, project_id: spec.project_id, root, ok: result.ok, tasks: outcomes }, null, 2)}\n`;
}

/** The goal file named in the spec, when it still exists; otherwise (undefined) the prompts use the preview. */
export function goalTextFromSource(spec: GoalWorkflowSpec): string | undefined {
  if (spec.goal.mode !== 'file' || !spec.goal.source) return undefined;
  try {
    const text = readUserFile(spec.goal.source);
    // A goal file edited since the spec was made no longer matches: fall back to the preview.
    return goalDigest(spec.project_id, spec.strategy, spec.template, normalizeGoalText(text)) === spec.goal.digest_sha256 ? text : undefined;
  } catch {
    return undefined;
  }
}

const stageList = (stages: number[]): string => `[${stages.join(' ')}]`;

/** `workflow run` without --json. */
export function formatWorkflowResult(r: WorkflowResult): string {
  const lines = [`workflow state: ${r.state_path}`, `template: ${r.template} stages: ${r.from_stage}..${r.to_stage}`];
  if (r.dry_run) lines.push(`dry-run planned stages: ${stageList(r.planned_stages)}`);
  else lines.push(`executed stages: ${stageList(r.executed_stages)}`);
  if (r.skipped_stages.length) lines.push(`skipped stages: ${stageList(r.skipped_stages)}`);
  if (r.state.completed_at) lines.push(`completed at: ${r.state.completed_at}`);
  return `${lines.join('\n')}\n`;
}

/** `iterate --json`. */
export function iterateResultJson(result: IterateResult): string {
  const iterations = result.iterations.map((r) => ({ iteration: r.iteration, impl_task: r.implTask, impl_run: r.implRunId, review_task: r.reviewTask, review_run: r.reviewRunId, verdict: r.verdict }));
  return `${JSON.stringify({ outcome: result.outcome, summary_path: result.summaryPath, iterations }, null, 2)}\n`;
}
