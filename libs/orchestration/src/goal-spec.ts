import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { type RunsLayout, normalizeDependsOn, parseYaml, stringifyYaml, validateProjectId, validateTaskId, writeDependsOn, writeTaskPromptIfAbsent } from '@app/storage';
import { RunnerError } from '@app/runner';

export const GOAL_SCHEMA_VERSION = 'goal-workflow/v1';
export const GOAL_DEFAULT_STRATEGY = 'rlm';
export const GOAL_DEFAULT_TEMPLATE = 'THE_PROMPT_v5';
export const GOAL_DEFAULT_MAX_PARALLEL = 6;
export const GOAL_MAX_PARALLEL_LIMIT = 16;
const DEFAULT_RLM_DOCUMENT = 'artifacts/context/RLM.md';
const THE_PROMPT_DOCUMENT = 'docs/workflow/THE_PROMPT_v5.md';

export interface GoalTaskSpec {
  task_id: string;
  title: string;
  agent: string;
  role_prompt: string;
  prompt_file: string;
  depends_on?: string[];
  rlm_step: string;
  the_prompt_v5_stages: number[];
}

export interface GoalWorkflowSpec {
  schema_version: string;
  workflow_id: string;
  project_id: string;
  root_dir?: string;
  strategy: string;
  template: string;
  max_parallel: number;
  semantics: { rlm_document: string; the_prompt_document: string };
  goal: { mode: string; source?: string; digest_sha256: string; bytes: number; preview: string };
  tasks: GoalTaskSpec[];
}

export interface GoalSpecInput {
  projectId: string;
  goal: string;
  /** `inline` (--goal) or `file` (--goal-file). */
  mode?: string;
  source?: string;
  rootDir?: string;
  strategy?: string;
  template?: string;
  maxParallel?: number;
  env?: NodeJS.ProcessEnv;
}

interface Blueprint {
  slug: string;
  title: string;
  agent: string;
  rolePrompt: string;
  rlmStep: string;
  stages: number[];
  dependsOn: string[];
}

// The fixed RLM decomposition (runner-agents.md §6.2).
const BLUEPRINT: readonly Blueprint[] = [
  { slug: 'assess-context', title: 'Assess context and constraints', agent: 'claude', rolePrompt: 'research', rlmStep: 'ASSESS', stages: [0, 1, 2], dependsOn: [] },
  { slug: 'decompose-plan', title: 'Decide strategy and decompose into executable tasks', agent: 'codex', rolePrompt: 'orchestrator', rlmStep: 'DECIDE_DECOMPOSE', stages: [3], dependsOn: ['assess-context'] },
  { slug: 'implement-changes', title: 'Implement code changes and update tests', agent: 'codex', rolePrompt: 'implementation', rlmStep: 'EXECUTE', stages: [5, 6], dependsOn: ['decompose-plan'] },
  { slug: 'run-tests', title: 'Run and validate focused test/build gates', agent: 'codex', rolePrompt: 'test', rlmStep: 'EXECUTE', stages: [4, 7], dependsOn: ['implement-changes'] },
  { slug: 'review-claude', title: 'Independent review pass (claude)', agent: 'claude', rolePrompt: 'review', rlmStep: 'EXECUTE', stages: [8, 9], dependsOn: ['implement-changes'] },
  { slug: 'review-gemini', title: 'Independent review pass (gemini)', agent: 'gemini', rolePrompt: 'review', rlmStep: 'EXECUTE', stages: [8, 9], dependsOn: ['implement-changes'] },
  {
    slug: 'synthesize-results',
    title: 'Synthesize implementation, test, and review outcomes',
    agent: 'codex',
    rolePrompt: 'orchestrator',
    rlmStep: 'SYNTHESIZE',
    stages: [10, 11],
    dependsOn: ['run-tests', 'review-claude', 'review-gemini'],
  },
  { slug: 'verify-completeness', title: 'Verify coverage, completeness, and publish summary', agent: 'claude', rolePrompt: 'monitor', rlmStep: 'VERIFY', stages: [12], dependsOn: ['synthesize-results'] },
];

function invalid(message: string): RunnerError {
  return new RunnerError('INVALID_INPUT', message);
}

/** CRLF/CR → LF, trimmed. */
export function normalizeGoalText(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(/\r/g, '\n').trim();
}

/** SHA-256 of schema, project, strategy, template and goal joined by `\n` (hex). */
export function goalDigest(projectId: string, strategy: string, template: string, goal: string): string {
  return createHash('sha256').update([GOAL_SCHEMA_VERSION, projectId, strategy, template, goal].join('\n')).digest('hex');
}

/** Lower-case, non-alphanumeric runs → one `-`, trimmed of dashes; `project` when nothing is left. */
export function sanitizeWorkflowId(value: string): string {
  const clean = value
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return clean || 'project';
}

/** Hex nibbles mod 10: the fake date/time digits of the generated task ids. */
function hashDigits(hash: string, n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) out += String(parseInt(hash[i % hash.length], 16) % 10);
  return out;
}

function goalPreview(goal: string): string {
  let preview = goal.split('\n')[0].trim() || goal.trim();
  // Byte length, as upstream measures it; cut on a character boundary.
  if (Buffer.byteLength(preview) > 120) {
    while (Buffer.byteLength(preview) > 117) preview = preview.slice(0, -1);
    return `${preview}...`;
  }
  return preview;
}

function cleanSlashPath(path: string): string {
  return posix.normalize(path.replace(/\\/g, '/')).replace(/(.)\/$/, '$1');
}

/** Deterministic workflow spec for a goal: same input, same bytes (nothing is executed). */
export function buildGoalSpec(input: GoalSpecInput): GoalWorkflowSpec {
  const projectId = input.projectId.trim();
  if (!projectId) throw invalid('project is required');
  const goal = normalizeGoalText(input.goal);
  if (!goal) throw invalid('goal is required');
  const strategy = (input.strategy ?? '').trim().toLowerCase() || GOAL_DEFAULT_STRATEGY;
  if (strategy !== GOAL_DEFAULT_STRATEGY) throw invalid(`unsupported strategy "${strategy}": only "${GOAL_DEFAULT_STRATEGY}" is supported`);
  const template = (input.template ?? '').trim() || GOAL_DEFAULT_TEMPLATE;
  let maxParallel = input.maxParallel ?? 0;
  if (!Number.isInteger(maxParallel)) throw invalid(`max parallel ${maxParallel} must be an integer`);
  if (maxParallel <= 0) maxParallel = GOAL_DEFAULT_MAX_PARALLEL;
  if (maxParallel > GOAL_MAX_PARALLEL_LIMIT) throw invalid(`max parallel ${maxParallel} exceeds limit ${GOAL_MAX_PARALLEL_LIMIT}`);

  const hash = goalDigest(projectId, strategy, template, goal);
  const workflowId = `workflow-${sanitizeWorkflowId(projectId)}-${hash.slice(0, 12)}`;
  const digits = hashDigits(hash, 14);
  const idOf = new Map<string, string>();
  BLUEPRINT.forEach((b, i) => idOf.set(b.slug, `task-${digits.slice(0, 8)}-${digits.slice(8, 14)}-${String(i + 1).padStart(2, '0')}-${b.slug}`));
  const tasks = BLUEPRINT.map((b, i): GoalTaskSpec => {
    const task: GoalTaskSpec = {
      task_id: idOf.get(b.slug)!,
      title: b.title,
      agent: b.agent,
      role_prompt: `docs/workflow/THE_PROMPT_v5_${b.rolePrompt}.md`,
      prompt_file: `workflow/${workflowId}/prompts/${String(i + 1).padStart(2, '0')}-${b.slug}.md`,
      rlm_step: b.rlmStep,
      the_prompt_v5_stages: [...b.stages],
    };
    if (b.dependsOn.length) task.depends_on = b.dependsOn.map((d) => idOf.get(d)!);
    // Keep the documented key order (depends_on before rlm_step).
    const { task_id, title, agent, role_prompt, prompt_file, depends_on, rlm_step, the_prompt_v5_stages } = task;
    return depends_on
      ? { task_id, title, agent, role_prompt, prompt_file, depends_on, rlm_step, the_prompt_v5_stages }
      : { task_id, title, agent, role_prompt, prompt_file, rlm_step, the_prompt_v5_stages };
  });

  const rlmOverride = (input.env ?? process.env).CONDUCTOR_RLM_SEMANTICS_DOC?.trim();
  const rootDir = input.rootDir?.trim();
  const source = input.source?.trim();
  return {
    schema_version: GOAL_SCHEMA_VERSION,
    workflow_id: workflowId,
    project_id: projectId,
    ...(rootDir ? { root_dir: rootDir } : {}),
    strategy,
    template,
    max_parallel: maxParallel,
    semantics: { rlm_document: rlmOverride ? cleanSlashPath(rlmOverride) : DEFAULT_RLM_DOCUMENT, the_prompt_document: THE_PROMPT_DOCUMENT },
    goal: {
      mode: input.mode?.trim() || 'inline',
      ...(source ? { source: cleanSlashPath(source) } : {}),
      digest_sha256: hash,
      bytes: Buffer.byteLength(goal),
      preview: goalPreview(goal),
    },
    tasks,
  };
}

export type GoalSpecFormat = 'yaml' | 'json';

/** `.json` → JSON, anything else → YAML. */
export function goalFormatForPath(path: string): GoalSpecFormat {
  return path.trim().toLowerCase().endsWith('.json') ? 'json' : 'yaml';
}

export function encodeGoalSpec(spec: GoalWorkflowSpec, format: GoalSpecFormat): string {
  if (format === 'json') return `${JSON.stringify(spec, null, 2)}\n`;
  // lineWidth 0: never fold long strings, so the bytes depend on the content only.
  return stringifyYaml(spec, { lineWidth: 0, minContentWidth: 0 });
}

/** Reads a spec written by encodeGoalSpec (YAML or JSON) and checks what `goal run` relies on. */
export function parseGoalSpec(text: string, path = 'spec'): GoalWorkflowSpec {
  let doc: unknown;
  try {
    doc = text.trimStart().startsWith('{') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw invalid(`${path}: not valid YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  const spec = doc as Partial<GoalWorkflowSpec> | null;
  if (!spec || typeof spec !== 'object') throw invalid(`${path}: not a workflow spec`);
  if (spec.schema_version !== GOAL_SCHEMA_VERSION) throw invalid(`${path}: schema_version must be "${GOAL_SCHEMA_VERSION}"`);
  if (typeof spec.project_id !== 'string') throw invalid(`${path}: project_id is missing`);
  if (!Array.isArray(spec.tasks) || spec.tasks.length === 0) throw invalid(`${path}: tasks are missing`);
  const ids = new Set<string>();
  for (const t of spec.tasks) {
    if (!t || typeof t.task_id !== 'string') throw invalid(`${path}: every task needs a task_id`);
    try {
      validateTaskId(t.task_id);
    } catch (err) {
      throw invalid(`${path}: ${(err as Error).message}`);
    }
    ids.add(t.task_id);
  }
  for (const t of spec.tasks) {
    for (const dep of t.depends_on ?? []) {
      if (!ids.has(dep)) throw invalid(`${path}: task ${t.task_id} depends on unknown task ${dep}`);
    }
  }
  return spec as GoalWorkflowSpec;
}

/** The TASK.md text of one generated task. */
export function goalTaskPrompt(spec: GoalWorkflowSpec, task: GoalTaskSpec, goalText: string | undefined): string {
  const lines = [
    `# ${task.title}`,
    '',
    `Workflow: ${spec.workflow_id} (${spec.template}, strategy ${spec.strategy})`,
    `RLM step: ${task.rlm_step}`,
    `${spec.template} stages: ${task.the_prompt_v5_stages.join(', ')}`,
    `Role prompt: ${task.role_prompt}`,
    `Semantics: ${spec.semantics.rlm_document}, ${spec.semantics.the_prompt_document}`,
  ];
  if (task.depends_on?.length) lines.push(`Depends on (already DONE when this task starts): ${task.depends_on.join(', ')}`);
  lines.push('', '## Goal', '', goalText ? normalizeGoalText(goalText) : `${spec.goal.preview} (full goal: ${spec.goal.source ?? 'not stored in the spec'})`);
  lines.push('', '## Completion', '', 'Write your results to output.md and create the DONE file in the task folder when this step is complete.');
  return lines.join('\n');
}

export interface MaterializedGoalTask {
  taskId: string;
  taskDir: string;
  created: boolean;
  dependsOn: string[];
}

/**
 * Creates every task of the spec under `<root>/<project>/`: TASK.md (kept when present),
 * TASK-CONFIG.yaml depends_on, and the prompt copy at `<project>/<prompt_file>`. Running the
 * tasks (`run-agent task`, the server) then follows the DAG through dependency gating.
 */
export function materializeGoalSpec(layout: RunsLayout, spec: GoalWorkflowSpec, goalText?: string): MaterializedGoalTask[] {
  validateProjectId(spec.project_id);
  if (goalText !== undefined) {
    const digest = goalDigest(spec.project_id, spec.strategy, spec.template, normalizeGoalText(goalText));
    if (digest !== spec.goal.digest_sha256) throw invalid('the goal text does not match the spec (digest_sha256 differs)');
  }
  const projectDir = layout.projectDir(spec.project_id);
  return spec.tasks.map((task) => {
    const taskDir = layout.taskDir(spec.project_id, task.task_id);
    mkdirSync(taskDir, { recursive: true });
    const prompt = goalTaskPrompt(spec, task, goalText);
    const created = writeTaskPromptIfAbsent(taskDir, prompt);
    const deps = normalizeDependsOn(task.task_id, task.depends_on ?? []);
    writeDependsOn(taskDir, deps);
    const promptFile = join(projectDir, ...task.prompt_file.split('/').filter((s) => s && s !== '..'));
    mkdirSync(dirname(promptFile), { recursive: true });
    writeFileSync(promptFile, `${prompt}\n`);
    return { taskId: task.task_id, taskDir, created, dependsOn: deps };
  });
}
