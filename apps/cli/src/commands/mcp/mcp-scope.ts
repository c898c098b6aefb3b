import { validateProjectId, validateRunId, validateTaskId } from '@app/storage';
import type { McpScope } from '@app/mcp';
import { UsageError } from '../../common/cli-errors';
import { resolveBusRoot, type BusEnv } from '../bus/bus-scope';
import { resolvePostBus, resolvePostScope } from '../bus/bus-post';

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
 * the server is scoped to the runs root only and tools take a `project` argument.
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
  };
}
