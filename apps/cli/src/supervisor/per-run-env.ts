/**
 * The variables a runner sets per run for its agent (libs/agents env.ts, jrunVariables): JRUN_*
 * and the seeds' short names. They differ between the sub-agents that call `run-agent task|job`,
 * so they are left out of the supervisor's socket name (a whole tree shares the supervisors) and out
 * of its own environment: each command reads them from its client's environment, never from the
 * supervisor's. bin/task-client.js applies the same rule (a test keeps the two equal).
 */
const SHORT_NAMES = new Set(['MESSAGE_BUS', 'TASK_FOLDER', 'RUN_FOLDER']);

export function isPerRunVariable(name: string): boolean {
  return name.startsWith('JRUN_') || SHORT_NAMES.has(name);
}

/** Removes the per-run variables from `env` (the supervisor's own, once, at start). */
export function dropPerRunVariables(env: NodeJS.ProcessEnv): void {
  for (const name of Object.keys(env)) if (isPerRunVariable(name)) delete env[name];
}
