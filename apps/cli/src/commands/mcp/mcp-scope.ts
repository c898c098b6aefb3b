import { configFileFor, loadConfig, validateProjectId, validateRunId, validateTaskId } from '@app/storage';
import type { McpScope } from '@app/mcp';
import { UsageError } from '../../common/cli-errors';
import { resolveBusRoot, type BusEnv } from '../bus/bus-scope';
import { resolvePostBus, resolvePostScope } from '../bus/bus-post';
import { loadRunConfig, type LoadedConfig } from '../engine/job-common';

export interface McpFlags {
  root?: string;
  project?: string;
  task?: string;
  run?: string;
  config?: string;
}

/**
 * The scope of `run-agent mcp`: the same resolution as `run-agent bus post` (flags, then the
 * JRUN_* variables of the agent that starts it, then the working directory). Without any of them
 * the server is scoped to the runs root only and tools take a `project` argument. `--project` /
 * `--task` also confine the session (McpScope.confine).
 */
export function resolveMcpScope(flags: McpFlags, e: BusEnv): McpScope {
  if (flags.project !== undefined) validateProjectId(flags.project);
  if (flags.task !== undefined) validateTaskId(flags.task);
  if (flags.run !== undefined) validateRunId(flags.run);
  const root = resolveBusRoot(flags.root, e);
  let scope: { project?: string; task?: string; run?: string } = {};
  try {
    const bus = resolvePostBus({ root: flags.root, project: flags.project, task: flags.task }, e);
    scope = resolvePostScope({ project: flags.project, task: flags.task, run: flags.run }, bus, e);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    // no bus file found from here: the ids still come from $JRUN_RUN_FOLDER, $JRUN_TASK_FOLDER or
    // $JRUN_*_ID when set (no bus path to read them from); with none of them a root-wide server
    scope = resolvePostScope({ project: flags.project, task: flags.task, run: flags.run }, '', e);
  }
  return {
    root,
    projectId: scope.project ? validateProjectId(scope.project) : undefined,
    taskId: scope.task ? validateTaskId(scope.task) : undefined,
    runId: scope.run ? validateRunId(scope.run) : undefined,
    // the flags (not the JRUN_* defaults) confine the session to what they name
    confine: flags.task !== undefined ? 'task' : flags.project !== undefined ? 'project' : undefined,
  };
}

/**
 * The config of `run-agent mcp`: as `job` loads it, except that a config found by the default
 * search (no --config, no $CONDUCTOR_CONFIG) that configures no agents counts as none. Upstream
 * writes such a template to ~/.run-agent/conductor-loop.hcl on almost any command; failing on it
 * would take the MCP tools away from an agent started with `--agent` and no config, although the
 * bus tools need no agents and task_start names its agent.
 */
export function loadMcpConfig(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  try {
    return loadRunConfig(flag, env);
  } catch (err) {
    // only when the strict load failed: read the discovered file again, leniently, to tell "no agents" apart
    const path = configFileFor(flag, { env });
    const discovered = !flag?.trim() && !env.CONDUCTOR_CONFIG?.trim();
    // The lenient read only tells the agent-less template apart; a file it cannot read either is the strict error.
    if (path && discovered && agentCount(path, env) === 0) return {};
    throw err;
  }
}

/** Agents configured in a discovered file, or -1 when it cannot be loaded even leniently (then it fails closed). */
function agentCount(path: string, env: NodeJS.ProcessEnv): number {
  try {
    return Object.keys(loadConfig(path, { strict: false, env }).agents).length;
  } catch {
    return -1;
  }
}
