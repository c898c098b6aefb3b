import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { runOutputFile, DONE_FILE } from '@app/storage';

export const RESTART_PREFIX = 'Continue working on the following:\n\n';

export interface PromptContext {
  root: string;
  taskDir: string;
  runDir: string;
  projectId: string;
  taskId: string;
  runId: string;
  parentRunId?: string;
  messageBus: string;
  conductorUrl?: string;
}

/** The preamble of prompt.md (runner-agents.md §2.3), byte-exact with upstream. */
export function buildPreamble(ctx: PromptContext): string {
  const lines = [
    `JRUN_TASK_FOLDER=${ctx.taskDir}`,
    `JRUN_RUN_FOLDER=${ctx.runDir}`,
    `JRUN_PROJECT_ID=${ctx.projectId}`,
    `JRUN_TASK_ID=${ctx.taskId}`,
    `JRUN_ID=${ctx.runId}`,
  ];
  if (ctx.parentRunId) lines.push(`JRUN_PARENT_ID=${ctx.parentRunId}`);
  lines.push(`JRUN_MESSAGE_BUS=${ctx.messageBus}`);
  if (ctx.conductorUrl) lines.push(`JRUN_CONDUCTOR_URL=${ctx.conductorUrl}`);
  lines.push(`Write output.md to ${runOutputFile(ctx.runDir)}`);
  let text = lines.join('\n') + '\n';
  text +=
    '\n## Message Bus\n' +
    'Report progress using:\n' +
    '  run-agent bus post --type PROGRESS --body "your message"\n' +
    '  run-agent bus post --type FACT --body "key result"\n' +
    '  run-agent bus post --type ERROR --body "what failed"\n' +
    '  run-agent bus post --type DECISION --body "what was decided"\n' +
    'Types: FACT, PROGRESS, DECISION, ERROR, QUESTION, INFO\n' +
    'The JRUN_MESSAGE_BUS env var is set; run-agent bus post uses it automatically.\n';
  text +=
    '\n## Sub-Agent Spawning (RLM Pattern)\n' +
    'For complex tasks, decompose using run-agent:\n' +
    '  run-agent job --project $JRUN_PROJECT_ID --task $JRUN_TASK_ID \\\n' +
    '    --parent-run-id $JRUN_ID --agent claude --prompt "sub-task description"\n' +
    'Run multiple sub-agents in PARALLEL for independent sub-tasks.\n' +
    'Use RLM (Recursive Language Model) decomposition:\n' +
    '  1. ASSESS context size and task complexity\n' +
    '  2. DECOMPOSE into independent sub-tasks at natural boundaries\n' +
    '  3. EXECUTE sub-agents in parallel\n' +
    '  4. SYNTHESIZE results\n';
  text += referenceDocs(ctx.root);
  text += `\n## Completion\nWhen done, create: ${join(ctx.taskDir, DONE_FILE)}\nThis signals the conductor loop to stop restarting this task.\n`;
  return text;
}

function referenceDocs(root: string): string {
  const repoRoot = dirname(root);
  const methodology = join(repoRoot, 'docs', 'workflow', 'THE_PROMPT_v5_conductor.md');
  const agentsMd = join(repoRoot, 'AGENTS.md');
  let text = '';
  if (existsSync(methodology)) text += `\n## Methodology\nRead ${methodology} for the full orchestration methodology.\n`;
  if (existsSync(agentsMd)) text += `Read ${agentsMd} for project conventions.\n`;
  return text;
}

/** Full prompt.md text: preamble, `---` separator, trimmed prompt (optionally with the restart prefix). */
export function buildPrompt(ctx: PromptContext, prompt: string, restart = false): string {
  const body = (restart ? RESTART_PREFIX : '') + prompt.trim();
  return `${buildPreamble(ctx)}\n---\n\n${body}\n`;
}
