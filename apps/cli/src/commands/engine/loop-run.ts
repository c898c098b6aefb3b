import { DEFAULT_RESTART_DELAY_MS, isolationFromFlags, type LoopSettings, type LoopSettingsFlags, type RunnerService, type TaskResult } from '@app/runner';
import type { RunsLayout } from '@app/storage';
import { agentCallerEnv, type LoadedConfig } from './job-common';
import { startTaskProgress } from './progress/task-progress';

/** What `task`, `resume` and `task resume` hand to the Ralph loop (one place for its options, env and progress). */
export interface LoopRun {
  runner: Pick<RunnerService, 'runTask'>;
  layout: RunsLayout;
  scope: { projectId: string; taskId: string };
  flags: Pick<LoopSettingsFlags, 'worktree' | 'repo' | 'base' | 'paths'> & { agent?: string; dependsOn?: string[]; conductorUrl?: string };
  loaded: LoadedConfig;
  settings: LoopSettings;
  cwd?: string;
  prompt?: string;
  /** Resume mode: the restart prefix from the first attempt on. */
  resume?: boolean;
  /** Attempt and phase lines on stderr (`task`), given the task's folder. */
  progressOf?: string;
  /** Where those lines go (default process.stderr; the task supervisor's: its client's). */
  stderr?: NodeJS.WriteStream;
  /** Aborting stops the loop and its agent (the task supervisor's client went away). */
  signal?: AbortSignal;
  /** The environment the runs inherit (default: this process's; the task supervisor's: its client's). */
  env?: NodeJS.ProcessEnv;
}

export function throwIfNotDone(result: TaskResult): void {
  if (result.status !== 'done') throw new Error(result.error ?? `task ${result.status}`);
}

/** Runs the loop with the command's flags; throws (mapped by reportError) unless the task ends done. */
export async function runLoop(r: LoopRun): Promise<void> {
  const { projectId, taskId } = r.scope;
  const progress =
    r.progressOf === undefined
      ? undefined
      : startTaskProgress({
          busPath: r.layout.taskBus(projectId, taskId),
          taskDir: r.progressOf,
          taskId,
          restartDelayMs: r.settings.restartDelayMs ?? DEFAULT_RESTART_DELAY_MS,
          stream: r.stderr ?? process.stderr,
        });
  const result = await r.runner
    .runTask({
      root: r.layout.root,
      projectId,
      taskId,
      prompt: r.prompt,
      config: r.loaded.config,
      agent: r.flags.agent,
      cwd: r.cwd,
      dependsOn: r.flags.dependsOn,
      resume: r.resume,
      isolation: isolationFromFlags(r.flags),
      conductorUrl: r.flags.conductorUrl,
      env: agentCallerEnv(r.loaded),
      baseEnv: r.env,
      signal: r.signal,
      ...r.settings,
    })
    .finally(() => progress?.stop());
  throwIfNotDone(result);
}
