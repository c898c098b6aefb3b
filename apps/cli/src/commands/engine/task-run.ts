/**
 * `run-agent task` (plain: no NestJS), run by TaskCommand and by the Nest-free hot path
 * (apps/cli/src/fast) with the runner of their composition root.
 */
import { loopSettings, type RunnerService } from '@app/runner';
import type { StorageIndexFactory } from '@app/storage';
import { agentCallerEnv, checkDir, loadRunConfig, promptFromFlags, resolveScope, runRoot } from './job-common';
import { runLoop } from './loop-run';
import type { TaskFlags } from './task-flags';

/** What `task` takes from its composition root. */
export interface TaskSeams {
  runner: Pick<RunnerService, 'runTask' | 'checkStartTask'>;
  /** The runs root's layout comes from its index (STORAGE_INDEX_FACTORY). */
  indexFor: StorageIndexFactory;
}

/** Where one `task` or `job` speaks, what ends it early and the environment it runs in (default: this process's; the task supervisor gives its client's). */
export interface TaskIo {
  stderr: NodeJS.WriteStream;
  signal?: AbortSignal;
  env?: NodeJS.ProcessEnv;
}

export { throwIfNotDone } from './loop-run';

export async function runTaskCommand(flags: TaskFlags, seams: TaskSeams, io: TaskIo = { stderr: process.stderr }): Promise<void> {
  const settings = loopSettings(flags);
  const prompt = promptFromFlags(flags);
  const cwd = checkDir(flags.cwd, 'working directory');
  const env = io.env ?? process.env;
  const loaded = loadRunConfig(flags.config, env);
  const root = runRoot(flags.root, loaded, env);
  const scope = resolveScope(flags, root, { generate: true, inferTask: false, env });
  // A start that cannot succeed leaves no task folder behind: the start-a-task use case's checks
  // (the loop seeds the task's files itself, under its lock).
  const { layout } = seams.indexFor(root);
  const { taskDir } = await seams.runner.checkStartTask({ layout, config: loaded.config, projectId: scope.projectId, taskId: scope.taskId, prompt, agent: flags.agent, env: agentCallerEnv(loaded), cwd, dependsOn: flags.dependsOn });
  if (scope.generated) io.stderr.write(`task: ${scope.taskId}\n`);
  await runLoop({ runner: seams.runner, layout, scope, flags, loaded, settings, cwd, prompt, progressOf: taskDir, stderr: io.stderr, signal: io.signal, env: io.env });
}
