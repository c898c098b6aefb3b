// What can refuse a task start, checked before anything is written (issue #13 item 5): the agent
// (known, configured, binary on PATH) and a prompt. The CLI and POST /api/v1/tasks call it first.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AgentError, type AgentSpec } from '@app/agents';
import type { AppConfig } from '@app/storage';
import { resolveSpec, selectAgent } from './agent-resolution';
import { errorText, RunnerError } from './runner.errors';
import { TASK_PROMPT_FILE } from '@app/storage';

export interface StartCheck {
  config?: AppConfig;
  /** Agent name from the request (config name or agent type); undefined = the config's default. */
  agent?: string;
  prompt?: string;
  /** The task folder: an existing TASK.md stands in for the prompt. */
  taskDir: string;
  env?: Record<string, string | undefined>;
  cwd?: string;
}

const isBadAgentInput = (err: unknown): boolean => err instanceof AgentError && (err.code === 'UNKNOWN_AGENT' || err.code === 'INVALID_CONFIG');

/**
 * The agent a start names (config name or agent type; undefined = the config's default) exists:
 * RunnerError INVALID_INPUT with a "did you mean" otherwise. Checked before anything is written.
 */
export function checkAgentName(config: AppConfig | undefined, agent: string | undefined): void {
  try {
    selectAgent(config, agent);
  } catch (err) {
    throw isBadAgentInput(err) ? new RunnerError('INVALID_INPUT', errorText(err)) : err;
  }
}

/**
 * Throws RunnerError INVALID_INPUT (no prompt, unknown agent, no config) or FATAL_AGENT (missing
 * binary …); returns the resolved agent.
 */
export async function checkTaskStart(check: StartCheck): Promise<AgentSpec> {
  if (!check.prompt?.trim() && !existsSync(join(check.taskDir, TASK_PROMPT_FILE))) {
    throw new RunnerError('INVALID_INPUT', 'TASK.md not found and no prompt provided');
  }
  try {
    const agent = selectAgent(check.config, check.agent);
    return await resolveSpec(agent, { ...process.env, ...check.env }, check.cwd ?? process.cwd());
  } catch (err) {
    // an agent name that matches nothing, or no agent to pick (no config), is bad input (CLI exit 2); a missing binary is fatal
    throw new RunnerError(isBadAgentInput(err) ? 'INVALID_INPUT' : 'FATAL_AGENT', errorText(err));
  }
}
