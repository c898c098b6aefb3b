import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { BusWriters } from '@app/messagebus';
import { parseYaml, rfc3339, type RunsLayout, stringifyYaml, validateProjectId, validateTaskId, writeFileAtomic } from '@app/storage';
import { RunnerError } from '@app/runner';
import type { AgentRunSettings } from './agent-runs';

export const WORKFLOW_TEMPLATE = 'THE_PROMPT_v5';
export const WORKFLOW_MIN_STAGE = 0;
export const WORKFLOW_MAX_STAGE = 12;
export const WORKFLOW_STAGE_TITLES: readonly string[] = [
  'Preflight',
  'Context Gathering',
  'Constraint Audit',
  'Decomposition',
  'Test Plan',
  'Implementation',
  'Implementation Refinement',
  'Validation',
  'Independent Review A',
  'Independent Review B',
  'Synthesis',
  'Finalization',
  'Completion',
];

export type StageStatus = 'pending' | 'running' | 'completed' | 'failed';

export interface WorkflowStage {
  stage: number;
  name: string;
  status: StageStatus;
  attempts: number;
  run_id?: string;
  started_at?: string;
  ended_at?: string;
  error?: string;
}

/** stage-state.yaml (cli-storage.md §6.7); times are RFC3339 strings. */
export interface WorkflowState {
  version: number;
  template: string;
  project_id: string;
  task_id: string;
  from_stage: number;
  to_stage: number;
  created_at: string;
  updated_at: string;
  completed_at?: string;
  stages: WorkflowStage[];
}

export interface WorkflowOptions extends AgentRunSettings {
  /** The runs root's layout and the bus-writer factory (of the composition root). */
  layout: RunsLayout;
  writers: BusWriters;
  projectId: string;
  taskId: string;
  template?: string;
  fromStage?: number;
  toStage?: number;
  resume?: boolean;
  dryRun?: boolean;
  statePath?: string;
}

export interface WorkflowResult {
  template: string;
  from_stage: number;
  to_stage: number;
  resume: boolean;
  dry_run: boolean;
  state_path: string;
  planned_stages: number[];
  executed_stages: number[];
  skipped_stages: number[];
  state: WorkflowState;
  /** Set when a stage failed (the workflow stopped there). */
  error?: string;
}

function invalid(message: string): RunnerError {
  return new RunnerError('INVALID_INPUT', message);
}

export function normalizeWorkflowTemplate(value: string | undefined): string {
  const t = (value ?? '').trim();
  if (t === '' || t.toUpperCase() === WORKFLOW_TEMPLATE.toUpperCase()) return WORKFLOW_TEMPLATE;
  throw invalid(`unsupported template "${t}": only ${WORKFLOW_TEMPLATE} is supported`);
}

export function validateStageRange(from: number, to: number): void {
  for (const [name, v] of [
    ['from-stage', from],
    ['to-stage', to],
  ] as const) {
    if (!Number.isInteger(v) || v < WORKFLOW_MIN_STAGE || v > WORKFLOW_MAX_STAGE) throw invalid(`${name} ${v} out of range [${WORKFLOW_MIN_STAGE}..${WORKFLOW_MAX_STAGE}]`);
  }
  if (from > to) throw invalid(`from-stage ${from} must be <= to-stage ${to}`);
}

/** `<task>/workflow/the-prompt-v5/stage-state.yaml` (template lower-cased, `_ - . space` → `-`). */
export function defaultWorkflowStatePath(taskDir: string, template: string): string {
  return join(taskDir, 'workflow', template.toLowerCase().replace(/[_\-. ]+/g, '-'), 'stage-state.yaml');
}

export function workflowStagePrompt(template: string, stage: number, taskDir: string): string {
  return [
    'Workflow stage execution request.',
    '',
    `Template: ${template}`,
    `Stage: ${stage} - ${WORKFLOW_STAGE_TITLES[stage] ?? `Stage ${stage}`}`,
    `Task folder: ${taskDir}`,
    '',
    'Instructions:',
    '1. Read TASK.md in the task folder for baseline context.',
    '2. Execute only this template stage and produce concrete, file-backed outcomes.',
    '3. Preserve prior stage outputs unless this stage explicitly requires changes.',
    '4. Summarize this stage in output.md, including decisions, facts, and unresolved risks.',
  ].join('\n');
}

/** Fixed key order, optional keys omitted when empty (as yaml.v3 omitempty). */
export function serializeWorkflowState(state: WorkflowState): string {
  const stages = [...state.stages]
    .sort((a, b) => a.stage - b.stage)
    .map((s) => ({
      stage: s.stage,
      name: s.name,
      status: s.status,
      attempts: s.attempts,
      ...(s.run_id ? { run_id: s.run_id } : {}),
      ...(s.started_at ? { started_at: s.started_at } : {}),
      ...(s.ended_at ? { ended_at: s.ended_at } : {}),
      ...(s.error ? { error: s.error } : {}),
    }));
  const doc = {
    version: state.version,
    template: state.template,
    project_id: state.project_id,
    task_id: state.task_id,
    from_stage: state.from_stage,
    to_stage: state.to_stage,
    created_at: state.created_at,
    updated_at: state.updated_at,
    ...(state.completed_at ? { completed_at: state.completed_at } : {}),
    stages,
  };
  return stringifyYaml(doc, { lineWidth: 0 });
}

export function readWorkflowState(path: string): WorkflowState | undefined {
  if (!existsSync(path)) return undefined;
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, 'utf8'), { schema: 'core' });
  } catch (err) {
    throw invalid(`workflow state ${path}: ${(err as Error).message.split('\n')[0]}`);
  }
  const s = doc as Partial<WorkflowState> | null;
  if (!s || typeof s !== 'object' || !Array.isArray(s.stages)) throw invalid(`workflow state ${path}: not a stage-state file`);
  const str = (v: unknown): string | undefined => (v instanceof Date ? rfc3339(v) : typeof v === 'string' && v !== '' ? v : undefined);
  return {
    version: Number(s.version ?? 1),
    template: String(s.template ?? ''),
    project_id: String(s.project_id ?? ''),
    task_id: String(s.task_id ?? ''),
    from_stage: Number(s.from_stage ?? 0),
    to_stage: Number(s.to_stage ?? 0),
    created_at: str(s.created_at) ?? '',
    updated_at: str(s.updated_at) ?? '',
    completed_at: str(s.completed_at) === '0001-01-01T00:00:00Z' ? undefined : str(s.completed_at),
    stages: s.stages.map((x) => ({
      stage: Number(x.stage),
      name: String(x.name ?? WORKFLOW_STAGE_TITLES[Number(x.stage)] ?? ''),
      status: (['pending', 'running', 'completed', 'failed'].includes(String(x.status)) ? x.status : 'pending') as StageStatus,
      attempts: Number(x.attempts ?? 0),
      run_id: str(x.run_id),
      started_at: str(x.started_at),
      ended_at: str(x.ended_at),
      error: str(x.error),
    })),
  };
}

function stageEntry(state: WorkflowState, stage: number): WorkflowStage {
  let entry = state.stages.find((s) => s.stage === stage);
  if (!entry) {
    entry = { stage, name: WORKFLOW_STAGE_TITLES[stage], status: 'pending', attempts: 0 };
    state.stages.push(entry);
    state.stages.sort((a, b) => a.stage - b.stage);
  }
  return entry;
}

/**
 * THE_PROMPT_v5 workflow: one job per stage in the task, state saved atomically after every
 * transition. `resume` turns stages left `running` (an interrupted run) into `failed` and runs
 * them again, skipping completed ones; a failed stage stops the workflow.
 */
export async function runWorkflow(opts: WorkflowOptions): Promise<WorkflowResult> {
  validateProjectId(opts.projectId);
  validateTaskId(opts.taskId);
  const template = normalizeWorkflowTemplate(opts.template);
  const from = opts.fromStage ?? WORKFLOW_MIN_STAGE;
  const to = opts.toStage ?? WORKFLOW_MAX_STAGE;
  validateStageRange(from, to);
  const now = opts.now ?? (() => new Date());
  const { layout } = opts;
  const taskDir = layout.taskDir(opts.projectId, opts.taskId);
  const statePath = opts.statePath ?? defaultWorkflowStatePath(taskDir, template);
  const resume = opts.resume === true;
  const planned = Array.from({ length: to - from + 1 }, (_, i) => from + i);

  const existing = readWorkflowState(statePath);
  if (existing) {
    const mismatch = (['template', 'project_id', 'task_id'] as const).find((k) => existing[k] !== { template, project_id: opts.projectId, task_id: opts.taskId }[k]);
    if (mismatch) throw invalid(`workflow state ${statePath} belongs to ${mismatch} "${existing[mismatch]}", not this run`);
  }
  const created = rfc3339(now());
  const state: WorkflowState = existing ?? {
    version: 1,
    template,
    project_id: opts.projectId,
    task_id: opts.taskId,
    from_stage: from,
    to_stage: to,
    created_at: created,
    updated_at: created,
    stages: [],
  };
  state.from_stage = from;
  state.to_stage = to;
  for (const n of planned) {
    const entry = stageEntry(state, n);
    if (!resume) Object.assign(entry, { status: 'pending', attempts: 0, run_id: undefined, started_at: undefined, ended_at: undefined, error: undefined });
    else if (entry.status === 'running') Object.assign(entry, { status: 'failed', error: entry.error || 'previous run interrupted' });
  }
  const result: WorkflowResult = {
    template,
    from_stage: from,
    to_stage: to,
    resume,
    dry_run: opts.dryRun === true,
    state_path: statePath,
    planned_stages: planned,
    executed_stages: [],
    skipped_stages: [],
    state,
  };
  // Dry run: report the plan, write nothing (no state, no bus messages).
  if (opts.dryRun) return result;

  state.completed_at = undefined;
  const save = (): void => {
    state.updated_at = rfc3339(now());
    mkdirSync(dirname(statePath), { recursive: true });
    writeFileAtomic(statePath, serializeWorkflowState(state));
  };
  mkdirSync(taskDir, { recursive: true });
  const bus = opts.writers(layout.taskBus(opts.projectId, opts.taskId));
  const post = (type: string, body: string, runId = ''): Promise<unknown> => bus.append({ type, project_id: opts.projectId, task_id: opts.taskId, run_id: runId, body });
  try {
    save();
    await post('DECISION', `workflow run started (${resume ? 'resume' : 'fresh'}) template=${template} stages=${from}..${to}`);
    for (const n of planned) {
      const entry = stageEntry(state, n);
      if (resume && entry.status === 'completed') {
        result.skipped_stages.push(n);
        await post('DECISION', `workflow stage ${n} skipped (already completed)`, entry.run_id ?? '');
        continue;
      }
      if (opts.signal?.aborted) throw new RunnerError('AGENT_FAILED', 'workflow interrupted');
      result.executed_stages.push(n);
      Object.assign(entry, { status: 'running', attempts: entry.attempts + 1, started_at: rfc3339(now()), ended_at: undefined, error: undefined, run_id: undefined });
      save();
      await post('PROGRESS', `workflow stage ${n} started`);
      const job = await opts.runJob({
        root: layout.root,
        projectId: opts.projectId,
        taskId: opts.taskId,
        prompt: workflowStagePrompt(template, n, taskDir),
        agent: opts.agent,
        config: opts.config,
        cwd: opts.cwd,
        env: opts.env,
        idleTimeoutMs: opts.idleTimeoutMs,
        signal: opts.signal,
      });
      entry.run_id = job.runId || undefined;
      entry.ended_at = rfc3339(now());
      if (!job.ok) {
        entry.status = 'failed';
        entry.error = job.error ?? 'agent execution failed';
        save();
        await post('ERROR', `workflow stage ${n} failed: ${entry.error}`, job.runId);
        result.error = `workflow stage ${n} failed: ${entry.error}`;
        return result;
      }
      entry.status = 'completed';
      save();
      await post('FACT', `workflow stage ${n} completed`, job.runId);
    }
    state.completed_at = rfc3339(now());
    save();
    await post('FACT', `workflow completed template=${template} stages=${from}..${to}`);
    return result;
  } finally {
    bus.close();
  }
}
