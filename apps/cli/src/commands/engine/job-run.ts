/**
 * `run-agent job` (plain: no NestJS), run by JobCommand and by the Nest-free hot path
 * (apps/cli/src/fast) with the runner and change feed of their composition root.
 */
import type { BusWriters } from '@app/messagebus';
import { type ChangeFeed, followRunStdout, type RunsLayout, type StorageIndexFactory, StorageError, validateRunId } from '@app/storage';
import { checkAgentName, hasSettings, JobResult, type RunnerService, withJobBudget, withJobCriteria } from '@app/runner';
import { prepareJobWorktree } from '@app/worktree';
import { UsageError } from '../../common/cli-errors';
import { agentCallerEnv, checkDir, loadRunConfig, optionalDuration, promptFromFlags, resolveScope, runRoot } from './job-common';
import type { JobFlags } from './job-flags';
import type { TaskIo } from './task-run';
import { budgetFlags, criteriaFlags, isolationFromFlags } from '@app/runner';

/** What `job` takes from its composition root. */
export interface JobSeams {
  runner: Pick<RunnerService, 'runJob'>;
  feed: ChangeFeed;
  /** The runs root's layout comes from its index (STORAGE_INDEX_FACTORY); the criteria and budget checks write the task bus through `writers`. */
  indexFor: StorageIndexFactory;
  writers: BusWriters;
}

/** The run folder named by --run-id (RunsLayout.adoptRunDir); one that already holds a run is a usage error. */
function adoptRunDir(layout: RunsLayout, projectId: string, taskId: string, runId: string): { runId: string; dir: string } {
  try {
    return layout.adoptRunDir(projectId, taskId, runId);
  } catch (err) {
    if (err instanceof StorageError && err.code === 'CONFLICT') throw new UsageError(err.message);
    throw err;
  }
}

/** Where one `job` speaks, what ends it and its environment (default: this process's), and its pending-child marker when the task supervisor wrote it. */
export type JobIo = TaskIo & { pendingMarker?: string };

export async function runJobCommand(flags: JobFlags, seams: JobSeams, io: JobIo = { stderr: process.stderr }): Promise<void> {
  await runJob(flags, seams, io);
}

async function runJob(all: JobFlags, seams: JobSeams, io: JobIo): Promise<void> {
  const env = io.env ?? process.env;
  const flags = { ...all, task: all.task, prompt: all.prompt?.at(-1), promptFile: all.promptFile?.at(-1) };
  const prompt = promptFromFlags(flags);
  if (!prompt) throw new UsageError('prompt is empty: pass --prompt or --prompt-file');
  const idleTimeoutMs = optionalDuration(flags.timeout, '--timeout');
  const criteria = criteriaFlags(flags);
  const cwd = checkDir(flags.cwd, 'working directory');
  const loaded = loadRunConfig(flags.config, env);
  // an agent typo (or no config and no agent) is a usage error before any folder exists; without
  // --agent a configured diversification policy picks the agent when the run starts
  if (flags.agent?.trim() || !loaded.config) checkAgentName(loaded.config, flags.agent);
  const root = runRoot(flags.root, loaded, env);
  const scope = resolveScope(flags, root, { generate: true, env });
  if (scope.generated) io.stderr.write(`task: ${scope.taskId}\n`);
  const parentRunId = flags.parentRunId?.trim() || env.JRUN_ID?.trim() || undefined;
  const parentTaskDir = env.JRUN_TASK_FOLDER?.trim() || undefined;
  // invalid input is a usage error (exit 2) before anything is written, as in wrap
  if (parentRunId) validateRunId(parentRunId);
  if (flags.previousRunId?.trim()) validateRunId(flags.previousRunId.trim());
  if (flags.runId !== undefined) validateRunId(flags.runId);
  const { layout } = seams.indexFor(root);
  // sub-agent jobs run in the worktree of their task (or of the task that started them) unless --worktree
  const wt = await prepareJobWorktree({
    root,
    writers: seams.writers,
    projectId: scope.projectId,
    taskId: scope.taskId,
    taskDir: layout.taskDir(scope.projectId, scope.taskId),
    isolation: isolationFromFlags(flags),
    config: loaded.config,
    agent: flags.agent,
    cwd,
    parentTaskDir,
  });
  const runDir = flags.runId !== undefined ? adoptRunDir(layout, scope.projectId, scope.taskId, flags.runId) : flags.follow ? layout.allocateRunDir(scope.projectId, scope.taskId) : undefined;
  const budget = budgetFlags(flags);
  const callerEnv = wt ? { ...agentCallerEnv(loaded), ...wt.env } : agentCallerEnv(loaded);
  const taskDir = layout.taskDir(scope.projectId, scope.taskId);
  const run = () => seams.runner.runJob({
    root,
    projectId: scope.projectId,
    taskId: scope.taskId,
    prompt,
    config: loaded.config,
    agent: flags.agent,
    cwd: wt?.cwd ?? cwd,
    worktree: wt?.fields,
    parentRunId,
    parentTaskDir,
    noWait: flags.noWait === true || flags.wait === false,
    previousRunId: flags.previousRunId?.trim() || undefined,
    idleTimeoutMs,
    conductorUrl: flags.conductorUrl,
    env: callerEnv,
    baseEnv: io.env,
    pendingMarker: io.pendingMarker,
    signal: io.signal,
    runDir,
    // not under a task loop: this job owns the task while it runs, its writes fenced (issue #31)
    ownTask: true,
  });
  // a DONE written by this job counts only once the task's completion criteria pass (issue #33)
  const start = () => withJobCriteria({ layout, writers: seams.writers, projectId: scope.projectId, taskId: scope.taskId, cwd: wt?.cwd ?? cwd ?? taskDir, env: callerEnv ?? {}, baseEnv: io.env, config: loaded.config, ...criteria }, run);
  const pending = hasSettings(budget)
    ? withJobBudget({ layout, writers: seams.writers, projectId: scope.projectId, taskId: scope.taskId, config: loaded.config, budget }, start)
    : start().then((result) => ({ result, exceeded: undefined }));
  if (runDir && flags.follow) await followRunStdout(runDir.dir, pending, { feed: seams.feed, write: (text) => void process.stdout.write(text) });
  const { result: checked, exceeded }: { result: { result: JobResult; rejected?: string }; exceeded?: string } = await pending;
  const { result, rejected } = checked;
  // D14: a short-lived job waits for its run_stop webhook delivery (bounded by timeout and retries).
  await result.webhook;
  if (exceeded) throw new Error(exceeded);
  if (!result.ok) throw Object.assign(new Error(result.error ?? 'agent execution failed'), { code: result.code });
  if (rejected) throw new Error(rejected);
}
