import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { checkStartTask } from '@app/runner';
import { type AppConfig, generateTaskId, type RunsLayout } from '@app/storage';
import type { SubTaskRequest } from './mcp.types';
import { McpInputError } from './tool-result';

export interface SubTaskPreflight {
  layout: RunsLayout;
  taskId: string;
  /** `<project>/<task>`: one run per task at a time from one server. */
  key: string;
  cwd?: string;
  env: NodeJS.ProcessEnv;
  /** The agent type the start resolved (config name or type → type). */
  agentType: string;
}

/**
 * What both `task_start` starters check before a run folder exists (a task already started here,
 * the working directory, then the start-a-task use case's checks: ids, the agent and its binary),
 * so a refused call changes nothing on disk.
 */
export async function preflightSubTask(
  req: SubTaskRequest,
  opts: { layout: RunsLayout; config?: AppConfig; env?: Record<string, string> },
  isActive: (key: string) => boolean,
): Promise<SubTaskPreflight> {
  const { layout } = opts;
  const taskId = req.taskId ?? generateTaskId();
  const key = `${req.projectId}/${taskId}`;
  if (isActive(key)) throw new McpInputError(`task ${taskId} already has a run started by this server`);
  let cwd: string | undefined;
  if (req.cwd) {
    cwd = resolve(req.cwd);
    if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw new McpInputError(`working directory not found: ${cwd}`);
  }
  const env = { ...process.env, ...opts.env };
  const checked = await checkStartTask({ layout, config: opts.config, projectId: req.projectId, taskId, prompt: req.prompt, agent: req.agent, env, cwd });
  return { layout, taskId, key, cwd, env, agentType: checked.agentType! };
}
