import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { BusWriter } from '@app/messagebus';
import {
  AppConfig,
  createLivenessProbe,
  LivenessProbe,
  RunsLayout,
  isCancelled,
  isLockOnPath,
  isTaskDone,
  normalizeDependsOn,
  readDependsOn,
  readStopRequested,
  tryFlock,
  unflock,
  validateNoDependencyCycle,
  validateProjectId,
  validateTaskId,
  writeDependsOn,
  writeTaskPromptIfAbsent,
} from '@app/storage';
import type { AgentRegistry } from '@app/agents';
import { AgentExecutor } from './agent-executor';
import type { WebhookSender } from './webhook';
import { waitForChildren } from './child-wait';
import { propagateAndReport } from './completion';
import { waitForDependencies } from './dependencies';
import { needsInputHooks, NeedsInputLoopOptions } from './needs-input/loop-hooks';
import { usageHooks, UsageLoopOptions } from './usage/loop-hooks';
import { JobResult, runJob } from './job';
import { adoptLiveRootRun, refuseLiveRootRun } from './live-run';
import { RunnerError, errorText } from './runner.errors';
import { sleep } from './sleep';
import { readStoppedBy } from './stop';
import { IsolationRequest, prepareTaskWorktree } from './worktree';

export const DEFAULT_MAX_RESTARTS = 100;
export const DEFAULT_RESTART_DELAY_MS = 1000;
export const DEFAULT_CHILD_WAIT_TIMEOUT_MS = 300_000;
export const DEFAULT_CHILD_POLL_MS = 1000;
export const DEFAULT_DEPENDENCY_POLL_MS = 2000;

export interface TaskOptions extends NeedsInputLoopOptions, UsageLoopOptions {
  root: string;
  projectId: string;
  taskId: string;
  prompt?: string;
  config?: AppConfig;
  agent?: string;
  cwd?: string;
  /** Given (even empty) ⇒ replaces TASK-CONFIG.yaml; undefined ⇒ read from it. */
  dependsOn?: string[];
  /** D2: at most N restarts after the first attempt (N+1 attempts); 0 runs once. */
  maxRestarts?: number;
  restartDelayMs?: number;
  childWaitTimeoutMs?: number;
  childPollIntervalMs?: number;
  dependencyPollIntervalMs?: number;
  idleTimeoutMs?: number;
  conductorUrl?: string;
  /** Resume mode: the restart prefix is used from the first attempt on. */
  resume?: boolean;
  firstRunDir?: { runId: string; dir: string };
  env?: Record<string, string>;
  signal?: AbortSignal;
  executor?: AgentExecutor;
  registry?: AgentRegistry;
  webhookSender?: WebhookSender;
  stopGraceMs?: number;
  webhookBackoffMs?: number[];
  probe?: LivenessProbe;
  /**
   * How long to wait for another loop of this task to release <task>/TASK.lock before failing
   * (default 0: fail at once). The server uses a short grace for its own loops that are finishing.
   */
  lockWaitMs?: number;
  /** Git worktree isolation (docs/worktrees.md); config `defaults.isolation` applies when absent. */
  isolation?: IsolationRequest;
  /** A live agent of a dead runner (issue #11): wait for it and continue, instead of refusing. */
  adopt?: boolean;
  /** Agents keep running if this process dies (the server, whose planner adopts them). */
  outliveRunner?: boolean;
  /** Called after each attempt (benchmarks and the API use it for progress). */
  onAttempt?(result: JobResult, attempt: number): void;
}

export interface TaskResult {
  status: 'done' | 'failed' | 'stopped';
  runIds: string[];
  error?: string;
}

function nonNegative(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new RunnerError('INVALID_INPUT', `${name} must not be negative`);
  return value;
}

function positive(value: number | undefined, fallback: number): number {
  return value !== undefined && value > 0 ? value : fallback;
}

/** Task prompt (runner-agents.md §1.1 step 3): TASK.md is seeded once and never overwritten. */
function resolvePrompt(taskDir: string, explicit?: string): string {
  const given = explicit?.trim() ?? '';
  const path = join(taskDir, 'TASK.md');
  if (!existsSync(path)) {
    if (!given) throw new RunnerError('INVALID_INPUT', 'TASK.md not found and no prompt provided');
    return given;
  }
  if (given) return given;
  const text = readFileSync(path, 'utf8').trim();
  if (!text) throw new RunnerError('INVALID_INPUT', 'read TASK.md: file is empty');
  return text;
}

export const TASK_LOCK_FILE = 'TASK.lock';
const LOCK_POLL_MS = 20;

function lockHolderPid(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One Ralph loop per task: an exclusive flock on <task>/TASK.lock, held until the returned release
 * is called; another holder makes it fail (after polling up to `waitMs`). The kernel drops the lock
 * when the holder dies, so a crashed loop never blocks the next one. Node opens files close-on-exec,
 * so agents do not inherit it.
 */
async function lockTask(taskDir: string, projectId: string, taskId: string, waitMs: number): Promise<() => void> {
  const path = join(taskDir, TASK_LOCK_FILE);
  const deadline = Date.now() + waitMs;
  for (;;) {
    const fd = openSync(path, 'a+', 0o644);
    let acquired: boolean;
    try {
      acquired = tryFlock(fd, 'ex');
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    if (!acquired) {
      closeSync(fd);
      if (Date.now() < deadline) {
        await sleep(Math.min(LOCK_POLL_MS, deadline - Date.now()));
        continue;
      }
      const pid = lockHolderPid(path);
      throw new RunnerError(
        'TASK_LOCKED',
        `task ${taskId} is already running (its Ralph loop is held by another process${pid ? `, pid ${pid}` : ''}); ` +
          `stop it with \`run-agent stop --project ${projectId} --task ${taskId}\` or wait`,
      );
    }
    // the task folder was deleted and recreated meanwhile: lock the file that is there now
    if (!isLockOnPath(fd, path)) {
      closeSync(fd);
      continue;
    }
    ftruncateSync(fd, 0);
    writeSync(fd, `${process.pid}\n`);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      ftruncateSync(fd, 0);
      unflock(fd);
      closeSync(fd);
    };
  }
}

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
  const maxRestarts = nonNegative(opts.maxRestarts, DEFAULT_MAX_RESTARTS, 'max restarts');
  const restartDelay = nonNegative(opts.restartDelayMs, DEFAULT_RESTART_DELAY_MS, 'restart delay');
  const childWait = positive(opts.childWaitTimeoutMs, DEFAULT_CHILD_WAIT_TIMEOUT_MS);
  const childPoll = positive(opts.childPollIntervalMs, DEFAULT_CHILD_POLL_MS);
  const depPoll = positive(opts.dependencyPollIntervalMs, DEFAULT_DEPENDENCY_POLL_MS);
  const lockWait = nonNegative(opts.lockWaitMs, 0, 'lock wait');
  let deps: string[] | undefined;
  if (opts.dependsOn !== undefined) deps = normalizeDependsOn(opts.taskId, opts.dependsOn);

  mkdirSync(taskDir, { recursive: true, mode: 0o755 });
  const prompt = resolvePrompt(taskDir, opts.prompt);
  if (isCancelled(taskDir)) {
    throw new RunnerError('STOPPED', `task ${opts.taskId} is cancelled (CANCELLED marker present); run-agent resume clears it`);
  }
  if (deps === undefined) deps = readDependsOn(taskDir);
  try {
    validateNoDependencyCycle(layout.root, opts.projectId, opts.taskId, deps);
  } catch (err) {
    throw new RunnerError('DEPENDENCY_CYCLE', errorText(err));
  }
  const releaseLock = await lockTask(taskDir, opts.projectId, opts.taskId, lockWait);
  try {
    if (opts.dependsOn !== undefined) writeDependsOn(taskDir, deps);
    // a bad --repo/--base is refused here, before TASK.md exists
    const wt = await prepareTaskWorktree({ ...opts, taskDir, root: layout.root });
    // written only after validation, so a rejected task leaves no TASK.md behind
    writeTaskPromptIfAbsent(taskDir, prompt);

    const taskBus = layout.taskBus(opts.projectId, opts.taskId);
    const bus = new BusWriter(taskBus);
    const post = async (type: string, body: string): Promise<void> => {
      await bus.append({ type, project_id: opts.projectId, task_id: opts.taskId, run_id: '', body });
    };
    const loopStart = Date.now();
    const stopReason = (): string | undefined => {
      if (isCancelled(taskDir)) return 'task cancelled';
      const req = readStopRequested(taskDir);
      if (!req) return undefined;
      if (req.permanent) return 'stop requested (permanent)';
      // RFC3339 has whole seconds: a marker from the second the loop started counts.
      if (req.requestedAt && req.requestedAt.getTime() >= Math.floor(loopStart / 1000) * 1000) return 'stop requested';
      return undefined;
    };
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
      deps,
      pollMs: depPoll,
      signal: opts.signal,
      post,
      shouldStop: () => stopReason() !== undefined,
    });
    if (gate === 'stopped') return stopped(stopReason() ?? 'cancelled while waiting for dependencies');

    const handleDone = async (): Promise<TaskResult> => {
      const outcome = await waitForChildren({
        taskDir,
        timeoutMs: childWait,
        pollMs: childPoll,
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
      if (attempt + 1 <= maxRestarts + answeredAttempts + rateLimitedAttempts && !(await sleep(restartDelay, opts.signal))) {
        return stopped(String(opts.signal?.reason ?? 'interrupted'));
      }
    }
  } finally {
    releaseLock();
  }
}
