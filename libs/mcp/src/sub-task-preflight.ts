import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { resolveSpec, selectAgent } from '@app/runner';
import { AppConfig, generateTaskId, RunsLayout } from '@app/storage';
import type { SubTaskRequest } from './mcp.types';
import { McpInputError } from './tool-result';

export interface SubTaskPreflight {
  layout: RunsLayout;
  taskId: string;
  /** `<project>/<task>`: one run per task at a time from one server. */
  key: string;
  cwd?: string;
  env: NodeJS.ProcessEnv;
  spec: Awaited<ReturnType<typeof resolveSpec>>;
}

/**
 * What both `task_start` starters check before a run folder exists (ids, a task already started
 * here, the working directory, the agent and its binary), so a refused call changes nothing on disk.
 */
export async function preflightSubTask(
  req: SubTaskRequest,
  opts: { root: string; config?: AppConfig; env?: Record<string, string> },
  isActive: (key: string) => boolean,
): Promise<SubTaskPreflight> {
  const layout = new RunsLayout(opts.root);
  const taskId = req.taskId ?? generateTaskId();
  const key = `${req.projectId}/${taskId}`;
  if (isActive(key)) throw new McpInputError(`task ${taskId} already has a run started by this server`);
  let cwd: string | undefined;
  if (req.cwd) {
    cwd = resolve(req.cwd);
    if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw new McpInputError(`working directory not found: ${cwd}`);
  }
  const env = { ...process.env, ...opts.env };
  const spec = await resolveSpec(selectAgent(opts.config, req.agent), env, cwd ?? layout.taskDir(req.projectId, taskId));
  return { layout, taskId, key, cwd, env, spec };
}
