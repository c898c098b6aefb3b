import { mkdirSync } from 'node:fs';
import { BusWriter } from '@app/messagebus';
import {
  createLivenessProbe,
  RunsLayout,
  isCancelled,
  isTaskDone,
  normalizeDependsOn,
  readDependsOn,
  validateNoDependencyCycle,
  validateProjectId,
  validateTaskId,
  writeDependsOn,
  writeTaskPromptIfAbsent,
} from '@app/storage';
import { waitForChildren } from './child-wait';
import { propagateAndReport } from './completion';
import { waitForDependencies } from './dependencies';
import { needsInputHooks } from './needs-input/loop-hooks';
import { usageHooks } from './usage/loop-hooks';
import { runJob } from './job';
import { adoptLiveRootRun, refuseLiveRootRun } from './live-run';
import { RunnerError, errorText } from './runner.errors';
import { sleep } from './sleep';
import { readStoppedBy } from './stop';
import { lockTask } from './task-lock';
import { taskLimits, type TaskOptions, type TaskResult } from './task-options';
import { resolveTaskPrompt, taskStopReason } from './task-state';
import { checkTaskWorktree, prepareTaskWorktree } from './worktree';

export { TASK_LOCK_FILE } from './task-lock';

/**
 * The Ralph loop (runner-agents.md §1 with D1–D4, D6): run attempts until DONE appears, the
 * restart budget is spent, a fatal error occurs or the task is stopped; then wait for child runs
 * and propagate the completion FACT once.
 */
export async function runTask(opts: TaskOptions): Promise<TaskResult> {
  validateProjectId(opts.projectId);
  validateTaskId(opts.taskId);
  const layout = new RunsLayout(opts.root);
  const taskDir = layout.taskDir(opts.projectId, opts.taskId);
  const limits = taskLimits(opts);
  const { maxRestarts } = limits;
  let deps: string[] | undefined;
  if (opts.dependsOn !== undefined) deps = normalizeDependsOn(opts.taskId, opts.dependsOn);

  // a bad --repo/--base/--paths is refused before the task folder exists (issue #29)
  await checkTaskWorktree({ ...opts, taskDir, root: layout.root });
  mkdirSync(taskDir, { recursive: true, mode: 0o755 });
  const prompt = resolveTaskPrompt(taskDir, opts.prompt);
  if (isCancelled(taskDir)) {
    throw new RunnerError('STOPPED', `task ${opts.taskId} is cancelled (CANCELLED marker present); run-agent resume clears it`);
  }
  if (deps === undefined) deps = readDependsOn(taskDir);
  try {
    validateNoDependencyCycle(layout.root, opts.projectId, opts.taskId, deps);
  } catch (err) {
    throw new RunnerError('DEPENDENCY_CYCLE', errorText(err));
  }
  const releaseLock = await lockTask(taskDir, opts.projectId, opts.taskId, limits.lockWaitMs);
  try {
    if (opts.dependsOn !== undefined) writeDependsOn(taskDir, deps);
    // checked above; what is left to fail here (git itself, the setup hook) fails before TASK.md exists
    const wt = await prepareTaskWorktree({ ...opts, taskDir, root: layout.root });
    // written only after validation, so a rejected task leaves no TASK.md behind
    writeTaskPromptIfAbsent(taskDir, prompt);

    const taskBus = layout.taskBus(opts.projectId, opts.taskId);
    const bus = new BusWriter(taskBus);
    const post = async (type: string, body: string): Promise<void> => {
      await bus.append({ type, project_id: opts.projectId, task_id: opts.taskId, run_id: '', body });
    };
    const loopStart = Date.now();
    const stopReason = (): string | undefined => taskStopReason(taskDir, loopStart);
    const runIds: string[] = [];
    const webhooks: Promise<boolean>[] = [];
    const finish = async (result: TaskResult): Promise<TaskResult> => {
      // the loop is over: webhook deliveries (with their back-off) need not block the next loop
      releaseLock();
      await Promise.allSettled(webhooks);
      return { ...result, runIds };
    };
    const stopped = async (reason: string): Promise<TaskResult> => {
      await post('INFO', `task stopped: ${reason}; not restarting`);
      return finish({ status: 'stopped', runIds, error: `task stopped: ${reason}` });
    };

    if (!opts.adopt) refuseLiveRootRun(taskDir, opts.projectId, opts.taskId, opts.probe);
    const adopted = opts.adopt ? await adoptLiveRootRun({ taskDir, probe: opts.probe, signal: opts.signal, post }) : undefined;
    if (adopted === 'aborted') return stopped(String(opts.signal?.reason ?? 'interrupted'));
    if (adopted) runIds.push(adopted);

    const gate = await waitForDependencies({
      root: layout.root,
      projectId: opts.projectId,
      taskDir,
      deps: opts.dependenciesMet ? [] : deps,
      pollMs: limits.dependencyPollMs,
      signal: opts.signal,
      post,
      shouldStop: () => stopReason() !== undefined,
    });
    if (gate === 'stopped') return stopped(stopReason() ?? 'cancelled while waiting for dependencies');

    const handleDone = async (): Promise<TaskResult> => {
      const outcome = await waitForChildren({
        taskDir,
        timeoutMs: limits.childWaitMs,
        pollMs: limits.childPollMs,
        probe: opts.probe ?? createLivenessProbe(),
        signal: opts.signal,
        post,
      });
      if (outcome === 'aborted') return finish({ status: 'stopped', runIds, error: 'failed waiting for children: context canceled' });
      await propagateAndReport(
        {
          root: layout.root,
          projectId: opts.projectId,
          taskId: opts.taskId,
          taskDir,
          projectBus: layout.projectBus(opts.projectId),
          taskBus,
        },
        bus,
      );
      return finish({ status: 'done', runIds });
    };

    const input = needsInputHooks(opts, {
      root: layout.root,
      projectId: opts.projectId,
      taskId: opts.taskId,
      bus,
      post,
      stopReason,
      conductorUrl: opts.conductorUrl,
      webhook: opts.config?.webhook,
      webhookBackoffMs: opts.webhookBackoffMs,
      webhookSender: opts.webhookSender,
      signal: opts.signal,
      onWebhook: (w) => webhooks.push(w),
    });
    const usage = usageHooks(opts, {
      root: layout.root,
      projectId: opts.projectId,
      taskId: opts.taskId,
      config: opts.config,
      bus,
      post,
      stopReason,
      signal: opts.signal,
      webhook: opts.config?.webhook,
      webhookBackoffMs: opts.webhookBackoffMs,
      stopGraceMs: opts.stopGraceMs,
      onWebhook: (w) => webhooks.push(w),
    });
    let answeredAttempts = 0; // attempts resumed after an answer do not count as restarts
    let rateLimitedAttempts = 0; // nor do attempts the provider refused with a rate limit
    let previousRunId: string | undefined = adopted;
    // an adopted run counts as the first attempt
    const firstAttempt = adopted ? 1 : 0;
    for (let attempt = firstAttempt; ; attempt++) {
      if (opts.signal?.aborted) return stopped(String(opts.signal.reason ?? 'interrupted'));
      if (isTaskDone(taskDir)) return handleDone();
      const reason = stopReason();
      if (reason) return stopped(reason);
      const waited = await input.gate();
      if (waited.kind === 'stopped') return stopped(waited.reason);
      if (waited.kind === 'timeout') {
        await post('ERROR', `task failed: ${waited.error}`);
        return finish({ status: 'failed', runIds, error: waited.error });
      }
      if (waited.kind === 'answered') answeredAttempts++;
      const held = await usage.gate();
      if (held.kind === 'stopped' || held.kind === 'budget') return stopped(held.kind === 'stopped' ? held.reason : held.error);
      if (isTaskDone(taskDir)) return handleDone();
      if (attempt > maxRestarts + answeredAttempts + rateLimitedAttempts) {
        await post('ERROR', `task failed: max restarts (${maxRestarts}) exceeded`);
        return finish({ status: 'failed', runIds, error: 'max restarts exceeded' });
      }
      const attemptPrompt = input.promptFor(prompt);
      await post('INFO', `starting root agent (restart #${attempt})`);
      const unwatch = input.watch();
      const unwatchBudget = usage.watch();
      const result = await runJob({
        root: layout.root,
        projectId: opts.projectId,
        taskId: opts.taskId,
        prompt: attemptPrompt,
        config: opts.config,
        agent: opts.agent,
        cwd: wt?.cwd ?? opts.cwd,
        worktree: wt?.fields,
        previousRunId,
        idleTimeoutMs: opts.idleTimeoutMs,
        conductorUrl: opts.conductorUrl,
        runDir: attempt === firstAttempt ? opts.firstRunDir : undefined,
        env: wt ? { ...opts.env, ...wt.env } : opts.env,
        signal: opts.signal,
        restart: attempt > 0 || opts.resume === true,
        executor: opts.executor,
        registry: opts.registry,
        webhookSender: opts.webhookSender,
        stopGraceMs: opts.stopGraceMs,
        webhookBackoffMs: opts.webhookBackoffMs,
        outliveRunner: opts.outliveRunner,
        resumeSessionId: usage.resumeSession(),
        queueTicket: usage.queueTicket(),
      }).finally(() => {
        unwatch();
        unwatchBudget();
      });
      if (result.webhook) webhooks.push(result.webhook);
      if (result.runId) {
        runIds.push(result.runId);
        previousRunId = result.runId;
      }
      opts.onAttempt?.(result, attempt);
      if (!result.ok) {
        if (result.fatal) {
          await post('ERROR', `task failed: ${result.error}`);
          return finish({ status: 'failed', runIds, error: result.error });
        }
        await post('WARNING', `root agent failed on restart #${attempt}: ${result.error}`);
      }
      if (isTaskDone(taskDir)) return handleDone();
      if (opts.signal?.aborted) return stopped(String(opts.signal.reason ?? 'interrupted'));
      const after = await usage.after(result);
      if (after.kind === 'stopped' || after.kind === 'budget') return stopped(after.kind === 'stopped' ? after.reason : after.error);
      if (after.kind === 'rate_limited') {
        rateLimitedAttempts++;
        continue;
      }
      const stoppedBy = result.runDir ? readStoppedBy(result.runDir) : undefined;
      if (stoppedBy) return stopped(`run ${result.runId} was stopped by ${stoppedBy}`);
      const late = stopReason();
      if (late) return stopped(late);
      if (attempt + 1 <= maxRestarts + answeredAttempts + rateLimitedAttempts && !(await sleep(limits.restartDelayMs, opts.signal))) {
        return stopped(String(opts.signal?.reason ?? 'interrupted'));
      }
    }
  } finally {
    releaseLock();
  }
}
