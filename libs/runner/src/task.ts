import { mkdirSync } from 'node:fs';
import {
  claimOwnerEpoch,
  type OwnerFence,
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
import { criteriaHooks } from './criteria/loop-hooks';
import { waitForDependencies } from './dependencies';
import { needsInputHooks } from './needs-input/loop-hooks';
import { usageHooks } from './usage/loop-hooks';
import { runJob } from './job';
import { adoptLiveRootRun, closeDeadRootRuns, refuseLiveRootRun } from './live-run';
import { RunnerError, errorText } from './runner.errors';
import { sleep } from './sleep';
import { readStoppedBy } from './stop';
import { lockTask, taskLeaseMs } from './task-lock';
import { taskLimits, type TaskResult, type TaskRun } from './task-options';
import { inheritedEnv } from './job-options';
import { resolveTaskPrompt, taskStopReason } from './task-state';
import { checkTaskWorktree, prepareTaskWorktree } from '@app/worktree';

export { TASK_LOCK_FILE } from './task-lock';

/**
 * The Ralph loop (runner-agents.md §1 with D1–D4, D6): run attempts until DONE appears, the
 * restart budget is spent, a fatal error occurs or the task is stopped; then wait for child runs
 * and propagate the completion FACT once.
 */
export async function runTask(opts: TaskRun): Promise<TaskResult> {
  validateProjectId(opts.projectId);
  validateTaskId(opts.taskId);
  const layout = opts.indexFor(opts.root).layout;
  const taskDir = layout.taskDir(opts.projectId, opts.taskId);
  const limits = taskLimits(opts);
  // the loop's liveness seam (RunnerService passes the injected one), handed down
  const { probe } = opts;
  const { maxRestarts } = limits;
  let deps: string[] | undefined;
  if (opts.dependsOn !== undefined) deps = normalizeDependsOn(opts.taskId, opts.dependsOn);

  // a bad --repo/--base/--paths is refused before the task folder exists (issue #29)
  const resolvedBase = await checkTaskWorktree({ ...opts, taskDir, root: layout.root });
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
  const leaseMs = taskLeaseMs();
  const lock = await lockTask(taskDir, opts.projectId, opts.taskId, limits.lockWaitMs, { takeover: opts.adopt === true, leaseMs });
  let owned: OwnerFence | undefined;
  const releaseLock = (): void => {
    lock.release();
    owned?.close();
  };
  try {
    if (opts.dependsOn !== undefined) writeDependsOn(taskDir, deps);
    // checked above; what is left to fail here (git itself, the setup hook) fails before TASK.md exists
    const wt = await prepareTaskWorktree({ ...opts, taskDir, root: layout.root, resolved: resolvedBase });
    // issue #31: this loop owns the task from here on (claimed once the input is valid, so a refused
    // start claims nothing); every write below proves it with the fence
    const fence = (owned = claimOwnerEpoch(taskDir, lock.tookOver ? 'takeover' : (opts.claimKind ?? (opts.adopt ? 'adopt' : opts.resume ? 'resume' : 'loop'))));
    // written only after validation, so a rejected task leaves no TASK.md behind
    writeTaskPromptIfAbsent(taskDir, prompt);

    const taskBus = layout.taskBus(opts.projectId, opts.taskId);
    const bus = opts.writers(taskBus, { fence });
    if (lock.tookOver) await bus.append({ type: 'WARNING', project_id: opts.projectId, task_id: opts.taskId, run_id: '', body: `took over the task from a runner that renewed nothing for ${leaseMs} ms (owner epoch ${fence.epoch}); its writes are refused from now on` });
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

    if (!opts.adopt) refuseLiveRootRun(taskDir, opts.projectId, opts.taskId, probe);
    const adopted = opts.adopt ? await adoptLiveRootRun({ taskDir, probe, signal: opts.signal, post, fence }) : undefined;
    if (adopted === 'aborted') return stopped(String(opts.signal?.reason ?? 'interrupted'));
    if (adopted) runIds.push(adopted);
    await closeDeadRootRuns({ taskDir, probe, post, fence });

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
      fence.check(); // the DONE decision is the owner's
      const outcome = await waitForChildren({
        taskDir,
        timeoutMs: limits.childWaitMs,
        pollMs: limits.childPollMs,
        probe,
        signal: opts.signal,
        stopReason,
        post,
      });
      if (outcome === 'aborted') return finish({ status: 'stopped', runIds, error: 'failed waiting for children: context canceled' });
      if (outcome !== 'completed') return stopped(outcome.stopped);
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
        opts.writers,
        fence,
      );
      return finish({ status: 'done', runIds });
    };

    const input = needsInputHooks(opts, {
      layout,
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
      layout,
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
    const criteria = criteriaHooks(opts, {
      layout,
      projectId: opts.projectId,
      taskId: opts.taskId,
      cwd: wt?.cwd ?? opts.cwd ?? taskDir,
      env: { ...inheritedEnv(opts), ...wt?.env, JRUN_PROJECT_ID: opts.projectId, JRUN_TASK_ID: opts.taskId, JRUN_TASK_FOLDER: taskDir },
      config: opts.config,
      bus,
      signal: opts.signal,
      post,
    });
    if (criteria.problem) {
      await post('ERROR', `task failed: ${criteria.problem}`);
      return finish({ status: 'failed', runIds, error: criteria.problem });
    }
    // DONE counts only once the task's completion criteria pass (issue #33)
    const doneAccepted = async (): Promise<boolean> => isTaskDone(taskDir) && (await criteria.accept(previousRunId));
    let answeredAttempts = 0; // attempts resumed after an answer do not count as restarts
    let rateLimitedAttempts = 0; // nor do attempts the provider refused with a rate limit
    let previousRunId: string | undefined = adopted;
    // an adopted run counts as the first attempt
    const firstAttempt = adopted ? 1 : 0;
    for (let attempt = firstAttempt; ; attempt++) {
      fence.check(); // so is every restart: a stale loop stops here
      if (opts.signal?.aborted) return stopped(String(opts.signal.reason ?? 'interrupted'));
      const reason = stopReason();
      // a finished task re-run is done; a stop that came while this loop ran wins over DONE
      if (!(reason && attempt > firstAttempt) && (await doneAccepted())) return handleDone();
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
      if (await doneAccepted()) return handleDone();
      if (attempt > maxRestarts + answeredAttempts + rateLimitedAttempts) {
        const rejected = criteria.lastFailure();
        const error = `max restarts exceeded${rejected ? `; last completion criteria failure: ${rejected}` : ''}`;
        await post('ERROR', `task failed: max restarts (${maxRestarts}) exceeded${rejected ? `; last completion criteria failure: ${rejected}` : ''}`);
        return finish({ status: 'failed', runIds, error });
      }
      fence.check();
      const attemptPrompt = criteria.promptFor(input.promptFor(prompt));
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
        baseEnv: opts.baseEnv,
        signal: opts.signal,
        restart: attempt > 0 || opts.resume === true,
        executor: opts.executor,
        writers: opts.writers,
        indexFor: opts.indexFor,
        registry: opts.registry,
        webhookSender: opts.webhookSender,
        stopGraceMs: opts.stopGraceMs,
        webhookBackoffMs: opts.webhookBackoffMs,
        outliveRunner: opts.outliveRunner,
        resumeSessionId: usage.resumeSession(),
        queueTicket: usage.queueTicket(),
        fence,
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
      const stoppedBy = result.runDir ? readStoppedBy(result.runDir) : undefined;
      // a stop of the run or the task wins over a DONE written meanwhile (the server's cancel writes
      // DONE, an agent may write it while dying): a stopped task ends stopped, with no completion
      if (!stoppedBy && !stopReason() && (await doneAccepted())) return handleDone();
      if (opts.signal?.aborted) return stopped(String(opts.signal.reason ?? 'interrupted'));
      const after = await usage.after(result);
      if (after.kind === 'stopped' || after.kind === 'budget') return stopped(after.kind === 'stopped' ? after.reason : after.error);
      if (after.kind === 'rate_limited') {
        rateLimitedAttempts++;
        continue;
      }
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
