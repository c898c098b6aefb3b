import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BusWriter } from '@app/messagebus';
import {
  AppConfig,
  RunInfo,
  RunsLayout,
  ZERO_TIME,
  updateRunInfo,
  validateProjectId,
  validateRunId,
  validateTaskId,
  writeRunInfo,
  writeRunInfoAsync,
  writeTaskPromptIfAbsent,
} from '@app/storage';
import {
  AgentRegistry,
  AgentSpec,
  SelectedAgent,
  buildAgentEnv,
  ensureOutputFile,
  errorSummaryForExit,
  extractOutput,
  GEMINI_FLAG_REJECTED_SUMMARY,
  isFatalAgentError,
  runAgentBinDir,
  setupAgentMcp,
} from '@app/agents';
import { AgentExecutor, AgentHandle } from './agent-executor';
import { createAgentExecutor } from './runner.providers';
import { AgentChoice, chooseAgent, detectVersion, resolveSpec, selectAgent } from './agent-resolution';
import { formatGoDuration } from './go-duration';
import { collectProcessTree } from './process-tree';
import { buildPrompt } from './prompt';
import { acquireRunSlot, RunSlot } from './run-slots';
import { RunnerError, errorText } from './runner.errors';
import { findRunById } from './run-scan';
import { refuseLiveRootRun } from './live-run';
import { clearPendingChild } from './pending-child';
import { readStoppedBy, signalExitCode, STOPPED_BY_FILE, terminateProcesses } from './stop';
import { deliverWebhook, RunStopPayload, WebhookSender, webhookWanted } from './webhook';
import { rfc3339Nano } from './time-format';

export const DEFAULT_MAX_DELEGATION_DEPTH = 16;

export interface JobOptions {
  root: string;
  projectId: string;
  taskId: string;
  prompt: string;
  config?: AppConfig;
  agent?: string;
  cwd?: string;
  /** run-info.yaml fields of a run in a git worktree (the worktree is `cwd`). */
  worktree?: { worktree: string; branch: string; base_commit: string };
  parentRunId?: string;
  previousRunId?: string;
  /** Idle-output timeout (CLI agents) or total deadline (REST agents); 0/undefined = none. */
  idleTimeoutMs?: number;
  conductorUrl?: string;
  runDir?: { runId: string; dir: string };
  env?: Record<string, string>;
  /** Aborting stops the agent's process group (SIGTERM, grace, SIGKILL). */
  signal?: AbortSignal;
  /** Prefix the prompt with the restart text (Ralph attempts > 0, resume mode). */
  restart?: boolean;
  executor?: AgentExecutor;
  /** Resolves agent specs and versions (RunnerService passes the injected one). */
  registry?: AgentRegistry;
  /** Delivers run_stop instead of deliverWebhook(config.webhook) (the injected WebhookService). */
  webhookSender?: WebhookSender;
  maxDelegationDepth?: number;
  /** Grace between SIGTERM and SIGKILL when aborted (default 30 s). */
  stopGraceMs?: number;
  /** Webhook retry sleeps (tests shorten them). */
  webhookBackoffMs?: number[];
  /** Skip the agent watchdog: the agent keeps running if this process dies (the server; issue #11). */
  outliveRunner?: boolean;
  /** Poll interval while queued for a max_concurrent_runs slot. */
  slotPollMs?: number;
}

export interface JobResult {
  runId: string;
  runDir: string;
  /** Absent when the job failed before its run folder got a run-info.yaml. */
  info?: RunInfo;
  ok: boolean;
  error?: string;
  /** D1: no restart can fix this (binary missing, unknown type, bad config, permission denied). */
  fatal?: boolean;
  /** Settles when the run_stop webhook is delivered or given up (false); undefined when not configured. */
  webhook?: Promise<boolean>;
}

/**
 * One agent run (runner-agents.md §2) with the diversification policy (D3): the agent is chosen
 * by the policy when no explicit agent is given, and one fallback run follows a failure when
 * `fallback_on_failure` is set.
 */
export async function runJob(opts: JobOptions): Promise<JobResult> {
  let choice: AgentChoice | undefined;
  if (!opts.agent) {
    try {
      choice = await chooseAgent(opts.config, new RunsLayout(opts.root).taskDir(validateProjectId(opts.projectId), validateTaskId(opts.taskId)));
    } catch (err) {
      return { runId: '', runDir: '', ok: false, error: errorText(err), fatal: true };
    }
  }
  const first = await runSingleJob({ ...opts, agent: opts.agent ?? choice?.agent });
  if (first.ok || !choice || opts.signal?.aborted) return first;
  const next = choice.policy.fallback(choice.agent);
  if (!next) return first;
  await first.webhook;
  return runSingleJob({ ...opts, agent: next, runDir: undefined });
}

/**
 * A `running` record owned by this runner process, written before the agent exists: for child
 * runs at once (the parent's DONE handling must see them), for root runs once they hold a slot,
 * so no reader ever sees an agent's effects (DONE, output) before the run itself. If the runner
 * dies first, reconciliation finds its pid dead and marks the run failed.
 */
function runnerSentinel(base: Omit<RunInfo, 'pid' | 'pgid' | 'agent_version'>): RunInfo {
  return { ...base, pid: process.pid, pgid: ownGroupId(), agent_version: '', process_ownership: 'managed' };
}

function ownGroupId(): number {
  try {
    return Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[2]) || process.pid;
  } catch {
    return process.pid;
  }
}

/** D13: the parent chain of a new child run must stay below the delegation depth limit. */
function checkDelegationDepth(root: string, taskDir: string, parentRunId: string, limit: number): void {
  let depth = 0;
  let current: string | undefined = parentRunId;
  const seen = new Set<string>();
  while (current && !seen.has(current)) {
    seen.add(current);
    depth++;
    if (depth >= limit) {
      throw new RunnerError(
        'DEPTH_LIMIT',
        `delegation depth limit (${limit}) exceeded: a child of run ${parentRunId} would be at depth ${depth + 1}`,
      );
    }
    current = findRunById(root, current, taskDir)?.info.parent_run_id;
  }
}

function conductorUrlFrom(opts: JobOptions): string | undefined {
  if (opts.conductorUrl) return opts.conductorUrl;
  const api = opts.config?.api;
  if (api && api.port && api.port > 0) {
    const host = !api.host || api.host === '0.0.0.0' ? '127.0.0.1' : api.host;
    return `http://${host}:${api.port}`;
  }
  return undefined;
}

function maxConcurrentRuns(config?: AppConfig): number {
  const value = (config?.defaults as { max_concurrent_runs?: number } | undefined)?.max_concurrent_runs;
  return typeof value === 'number' && value > 0 ? value : 0;
}

function failure(message: string, fatal: boolean, code: RunnerError['code'] = fatal ? 'FATAL_AGENT' : 'AGENT_FAILED'): RunnerError {
  return new RunnerError(code, message);
}

interface Prepared {
  layout: RunsLayout;
  taskDir: string;
  prompt: string;
  cwd: string;
  agent: SelectedAgent;
  spec: AgentSpec;
}

/** Steps that must succeed before anything is written for the run; errors are thrown. */
async function prepare(opts: JobOptions): Promise<Prepared> {
  validateProjectId(opts.projectId);
  validateTaskId(opts.taskId);
  // D18: these ids are stored in run-info.yaml and followed through the runs root (parent chain).
  if (opts.parentRunId) validateRunId(opts.parentRunId);
  if (opts.previousRunId) validateRunId(opts.previousRunId);
  const layout = new RunsLayout(opts.root);
  const taskDir = layout.taskDir(opts.projectId, opts.taskId);
  const prompt = (opts.prompt ?? '').trim();
  if (!prompt) throw new RunnerError('INVALID_INPUT', 'prompt is empty');
  const cwd = resolve(opts.cwd ?? taskDir);
  if (opts.cwd !== undefined && (!existsSync(cwd) || !statSync(cwd).isDirectory())) {
    throw failure(`working directory does not exist: ${cwd}`, true);
  }
  // Everything that can refuse the job runs before the task folder is created (bad input changes nothing).
  let agent: SelectedAgent;
  let spec: AgentSpec;
  try {
    agent = selectAgent(opts.config, opts.agent);
    spec = await resolveSpec(agent, { ...process.env, ...opts.env }, cwd, opts.registry);
  } catch (err) {
    throw failure(errorText(err), isFatalAgentError(err));
  }
  // a root run never starts next to a live agent of a dead runner (issue #11)
  if (!opts.parentRunId) refuseLiveRootRun(taskDir, opts.projectId, opts.taskId);
  if (opts.parentRunId) {
    checkDelegationDepth(layout.root, taskDir, opts.parentRunId, opts.maxDelegationDepth ?? DEFAULT_MAX_DELEGATION_DEPTH);
  }
  mkdirSync(join(taskDir, 'runs'), { recursive: true, mode: 0o755 });
  writeTaskPromptIfAbsent(taskDir, prompt);
  return { layout, taskDir, prompt, cwd, agent, spec };
}

/** A single run without diversification (§2.1 order of operations). */
export async function runSingleJob(opts: JobOptions): Promise<JobResult> {
  let prepared: Prepared;
  try {
    prepared = await prepare(opts);
  } catch (err) {
    const fatal = err instanceof RunnerError ? err.code !== 'AGENT_FAILED' : true;
    return { runId: '', runDir: '', ok: false, error: errorText(err), fatal };
  }
  const { layout, taskDir, prompt, cwd, agent, spec } = prepared;
  const { runId, dir: runDir } = opts.runDir ?? layout.allocateRunDir(opts.projectId, opts.taskId);
  const infoPath = join(runDir, 'run-info.yaml');
  const taskBus = join(taskDir, 'TASK-MESSAGE-BUS.md');
  const bus = new BusWriter(taskBus);
  const paths = {
    prompt_path: join(runDir, 'prompt.md'),
    output_path: join(runDir, 'output.md'),
    stdout_path: join(runDir, 'agent-stdout.txt'),
    stderr_path: join(runDir, 'agent-stderr.txt'),
  };
  const base = {
    version: 1,
    run_id: runId,
    parent_run_id: opts.parentRunId || undefined,
    previous_run_id: opts.previousRunId || undefined,
    project_id: opts.projectId,
    task_id: opts.taskId,
    agent: spec.type,
    agent_name: agent.name || undefined,
    start_time: new Date(),
    end_time: ZERO_TIME,
    exit_code: -1,
    status: 'running' as const,
    cwd,
    ...opts.worktree,
    ...paths,
  };
  if (opts.parentRunId) {
    writeRunInfo(infoPath, runnerSentinel(base), { fsync: false });
    clearPendingChild();
  }

  const agentVersion = await detectVersion(spec, { ...process.env, ...opts.env }, opts.registry);
  let slot: RunSlot;
  try {
    slot = await acquireRunSlot({
      root: layout.root,
      limit: maxConcurrentRuns(opts.config),
      runId,
      signal: opts.signal,
      pollMs: opts.slotPollMs,
    });
  } catch (err) {
    const message = `acquire run slot: ${errorText(err)}`;
    if (opts.parentRunId) {
      await updateRunInfo(infoPath, (i) => ({ ...i, status: 'failed', end_time: new Date(), error_summary: message })).catch(() => undefined);
    }
    return { runId, runDir, ok: false, error: message };
  }
  try {
    const conductorUrl = conductorUrlFrom(opts);
    writeFileSync(
      paths.prompt_path,
      buildPrompt(
        {
          root: layout.root,
          taskDir,
          runDir,
          projectId: opts.projectId,
          taskId: opts.taskId,
          runId,
          parentRunId: opts.parentRunId,
          messageBus: taskBus,
          conductorUrl,
        },
        prompt,
        opts.restart,
      ),
      { mode: 0o644 },
    );
    const env = buildAgentEnv({
      agentType: spec.type,
      base: process.env,
      jrun: {
        projectId: opts.projectId,
        taskId: opts.taskId,
        runId,
        parentRunId: opts.parentRunId,
        runsDir: join(taskDir, 'runs'),
        messageBus: taskBus,
        taskFolder: taskDir,
        runFolder: runDir,
        conductorUrl,
      },
      token: agent.config.token,
      binDir: runAgentBinDir(),
      callerEnv: opts.env,
    });
    const agentSpec = agent.config.mcp ? withMcp(spec, env, { root: layout.root, projectId: opts.projectId, taskId: opts.taskId, runId, runDir }) : spec;
    const started: RunInfo = { ...base, start_time: new Date(), agent_version: agentVersion, pid: 0, pgid: 0 };
    if (!opts.parentRunId) writeRunInfo(infoPath, { ...runnerSentinel(started), agent_version: agentVersion }, { fsync: false });
    const ctx: ExecContext = { opts, runId, runDir, infoPath, bus, info: started, env, cwd, spec: agentSpec };
    const result = spec.kind === 'cli' ? await executeCli(ctx) : await executeRest(ctx);
    result.webhook = startWebhook(opts, result, bus);
    return result;
  } finally {
    slot.release();
  }
}

/** `mcp: true`: the agent CLI gets our MCP server (`run-agent mcp` scoped to this run) in its config. */
function withMcp(spec: AgentSpec, env: Record<string, string>, run: { root: string; projectId: string; taskId: string; runId: string; runDir: string }): AgentSpec {
  if (spec.kind !== 'cli') return spec;
  const binDir = runAgentBinDir();
  const setup = setupAgentMcp(spec.type, spec.args, run.runDir, { ...run, runAgentPath: binDir ? join(binDir, 'run-agent') : 'run-agent' });
  if (!setup) return spec;
  Object.assign(env, setup.env);
  return { ...spec, args: setup.args };
}

interface ExecContext {
  opts: JobOptions;
  runId: string;
  runDir: string;
  infoPath: string;
  bus: BusWriter;
  info: RunInfo;
  env: Record<string, string>;
  cwd: string;
  spec: AgentSpec;
}

function runStartBody(ctx: ExecContext): string {
  const i = ctx.info;
  return `run started\nrun_dir: ${ctx.runDir}\nprompt: ${i.prompt_path}\nstdout: ${i.stdout_path}\nstderr: ${i.stderr_path}\noutput: ${i.output_path}`;
}

async function post(ctx: ExecContext, type: string, body: string): Promise<void> {
  await ctx.bus.append({ type, project_id: ctx.info.project_id, task_id: ctx.info.task_id, run_id: ctx.runId, body });
}

function stderrTail(path: string, lines = 50): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return '';
  }
  if (text.endsWith('\n')) text = text.slice(0, -1);
  if (!text) return '';
  return text.split('\n').slice(-lines).join('\n');
}

async function executeCli(ctx: ExecContext): Promise<JobResult> {
  const spec = ctx.spec as Extract<AgentSpec, { kind: 'cli' }>;
  const executor = ctx.opts.executor ?? createAgentExecutor();
  let handle: AgentHandle;
  try {
    handle = await executor.start({
      runId: ctx.runId,
      command: spec.resolvedPath || spec.command,
      args: spec.args,
      cwd: ctx.cwd,
      env: ctx.env,
      stdinPath: ctx.info.prompt_path!,
      stdoutPath: ctx.info.stdout_path!,
      stderrPath: ctx.info.stderr_path!,
      outliveRunner: ctx.opts.outliveRunner,
    });
  } catch (err) {
    const info: RunInfo = { ...ctx.info, pid: process.pid, pgid: ownGroupId(), status: 'failed', exit_code: -1, end_time: new Date() };
    await writeRunInfoAsync(ctx.infoPath, info);
    const code = (err as NodeJS.ErrnoException).code;
    const fatal = code === 'ENOENT' || code === 'EACCES' || code === 'ENOEXEC';
    return { runId: ctx.runId, runDir: ctx.runDir, info, ok: false, fatal, error: `spawn agent: start process: ${errorText(err)}` };
  }
  ctx.info = {
    ...ctx.info,
    pid: handle.pid,
    pgid: handle.pgid,
    commandline: `${[spec.command, ...spec.args].join(' ')} < ${ctx.info.prompt_path}`,
  };
  const exitPromise = handle.wait();
  let termination: Promise<unknown> = Promise.resolve();
  const onAbort = (): void => {
    const reason = ctx.opts.signal?.reason;
    const stopReason = typeof reason === 'string' ? reason : 'runner shutdown';
    if (!existsSync(join(ctx.runDir, STOPPED_BY_FILE))) writeFileSync(join(ctx.runDir, STOPPED_BY_FILE), `${stopReason}\n`);
    const tree = collectProcessTree([handle.pgid]);
    termination = terminateProcesses([handle.pgid], tree, ctx.opts.stopGraceMs ?? 30_000);
  };
  try {
    // Synchronously, before the agent can do anything observable: from here on readers and
    // `stop` see the agent's pid, not the runner's sentinel record. No fsync on this hot path:
    // the rename keeps it atomic, and the end-of-run update is written durably.
    writeRunInfo(ctx.infoPath, ctx.info, { fsync: false });
    await post(ctx, 'RUN_START', runStartBody(ctx));
  } catch (err) {
    handle.signal('SIGKILL');
    await exitPromise;
    return { runId: ctx.runId, runDir: ctx.runDir, info: ctx.info, ok: false, error: errorText(err) };
  }
  // A stop that read the sentinel could not signal the agent; it left STOPPED-BY for us.
  if (ctx.opts.signal?.aborted || readStoppedBy(ctx.runDir)) onAbort();
  else ctx.opts.signal?.addEventListener('abort', onAbort, { once: true });
  const idle = watchIdle(ctx, handle);
  const exit = await exitPromise;
  idle.stop();
  // the leader is gone; wait until the rest of its tree is too (no orphans after a stop)
  await Promise.all([termination, idle.termination()]);
  ctx.opts.signal?.removeEventListener('abort', onAbort);

  const timedOut = idle.timedOut();
  let exitCode = exit.code ?? signalExitCode(exit.signal ?? 'SIGKILL');
  let waitError = exit.code === null ? `signal: ${signalName(exit.signal)}` : exitCode !== 0 ? `exit status ${exitCode}` : '';
  let summary: string | undefined;
  const stoppedBy = readStoppedBy(ctx.runDir);
  if (timedOut) summary = 'timed out';
  else if (stoppedBy && exitCode !== 0) summary = `stopped by ${stoppedBy}${exit.signal ? ` (${exit.signal})` : ''}`;
  else if (exitCode !== 0) summary = errorSummaryForExit(exitCode);

  let extractionError: string | undefined;
  try {
    const extraction = extractOutput(spec.type, ctx.runDir);
    if (extraction.geminiFlagRejected) {
      exitCode = 1;
      summary = GEMINI_FLAG_REJECTED_SUMMARY;
      waitError = waitError || 'gemini stream parse failed';
    }
  } catch (err) {
    extractionError = errorText(err);
  }
  return finish(ctx, exitCode, summary, waitError ? `agent execution failed: ${waitError}` : extractionError, {
    timedOutNotice: timedOut ? `agent job timed out after ${formatGoDuration(ctx.opts.idleTimeoutMs ?? 0)} of idle output` : undefined,
  });
}

function signalName(signal: NodeJS.Signals | null): string {
  if (signal === 'SIGTERM') return 'terminated';
  if (signal === 'SIGKILL') return 'killed';
  if (signal === 'SIGINT') return 'interrupt';
  return signal ?? 'unknown';
}

/** Idle-output watcher (§2.8): no growth of stdout/stderr for the timeout kills the whole group. */
function watchIdle(ctx: ExecContext, handle: AgentHandle): { stop(): void; timedOut(): boolean; termination(): Promise<unknown> } {
  const timeout = ctx.opts.idleTimeoutMs ?? 0;
  if (!(timeout > 0)) return { stop: () => undefined, timedOut: () => false, termination: () => Promise.resolve() };
  const interval = Math.min(250, Math.max(50, timeout / 4));
  const size = (p: string): number => {
    try {
      return statSync(p).size;
    } catch {
      return 0;
    }
  };
  let last = size(ctx.info.stdout_path!) + size(ctx.info.stderr_path!);
  let lastChange = Date.now();
  let fired = false;
  let killing: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    const now = size(ctx.info.stdout_path!) + size(ctx.info.stderr_path!);
    if (now !== last) {
      last = now;
      lastChange = Date.now();
      return;
    }
    if (!fired && Date.now() - lastChange >= timeout) {
      fired = true;
      const tree = collectProcessTree([handle.pgid]);
      killing = terminateProcesses([handle.pgid], tree, 0);
    }
  }, interval);
  return { stop: () => clearInterval(timer), timedOut: () => fired, termination: () => killing };
}

async function executeRest(ctx: ExecContext): Promise<JobResult> {
  const spec = ctx.spec as Extract<AgentSpec, { kind: 'rest' }>;
  ctx.info = { ...ctx.info, pid: process.pid, pgid: ownGroupId() };
  await writeRunInfoAsync(ctx.infoPath, ctx.info);
  await post(ctx, 'RUN_START', runStartBody(ctx));
  const timeout = ctx.opts.idleTimeoutMs ?? 0;
  const signals = [ctx.opts.signal, timeout > 0 ? AbortSignal.timeout(timeout) : undefined].filter((s): s is AbortSignal => !!s);
  const prompt = readFileSync(ctx.info.prompt_path!, 'utf8');
  try {
    await spec.run({
      prompt,
      env: ctx.env,
      stdoutPath: ctx.info.stdout_path!,
      stderrPath: ctx.info.stderr_path!,
      signal: signals.length ? AbortSignal.any(signals) : undefined,
    });
  } catch (err) {
    const text = errorText(err);
    const timedOut = timeout > 0 && !ctx.opts.signal?.aborted && /abort|timeout/i.test(text);
    return finish(ctx, 1, Buffer.from(text).subarray(0, 200).toString(), `agent execution failed: ${text}`, {
      timedOutNotice: timedOut ? `agent job timed out after ${formatGoDuration(timeout)}` : undefined,
      fatal: isFatalAgentError(err),
    });
  }
  return finish(ctx, 0, undefined, undefined, {});
}

/** §2.5 steps 10–13: locked run-info update, output.md fallback, RUN_STOP/RUN_CRASH, timeout notice. */
async function finish(
  ctx: ExecContext,
  exitCode: number,
  summary: string | undefined,
  error: string | undefined,
  extra: { timedOutNotice?: string; fatal?: boolean },
): Promise<JobResult> {
  const status = exitCode === 0 && !error ? 'completed' : 'failed';
  const info = await updateRunInfo(ctx.infoPath, (i) => {
    i.exit_code = exitCode;
    i.end_time = new Date();
    i.status = status;
    i.error_summary = status === 'failed' ? summary : undefined;
    return i;
  });
  try {
    ensureOutputFile(ctx.runDir);
  } catch (err) {
    return { runId: ctx.runId, runDir: ctx.runDir, info, ok: false, error: errorText(err) };
  }
  let body = `run stopped with code ${exitCode}\nrun_dir: ${ctx.runDir}\noutput: ${info.output_path}`;
  if (status === 'failed') {
    const tail = stderrTail(info.stderr_path!);
    if (tail) body += `\n\n## stderr (last 50 lines)\n${tail}`;
  }
  await post(ctx, exitCode === 0 ? 'RUN_STOP' : 'RUN_CRASH', body);
  if (extra.timedOutNotice) await post(ctx, 'WARN', extra.timedOutNotice);
  const ok = status === 'completed';
  return { runId: ctx.runId, runDir: ctx.runDir, info, ok, error: ok ? undefined : error ?? `agent execution failed: exit status ${exitCode}`, fatal: extra.fatal };
}

function startWebhook(opts: JobOptions, result: JobResult, bus: BusWriter): Promise<boolean> | undefined {
  const cfg = opts.config?.webhook;
  const sender = opts.webhookSender;
  if (!(sender ? sender.wanted(cfg) : webhookWanted(cfg)) || !result.info) return undefined;
  const info = result.info;
  const started = info.start_time;
  const stopped = info.end_time;
  const payload: RunStopPayload = {
    event: 'run_stop',
    project_id: info.project_id,
    task_id: info.task_id,
    run_id: info.run_id,
    agent_type: info.agent,
    status: info.status,
    exit_code: info.exit_code,
    started_at: rfc3339Nano(started),
    stopped_at: rfc3339Nano(stopped),
    duration_seconds: (stopped.getTime() - started.getTime()) / 1000,
  };
  if (info.error_summary) payload.error_summary = info.error_summary;
  if (sender) return sender.deliver(cfg, payload, bus, { backoffMs: opts.webhookBackoffMs });
  return deliverWebhook(cfg!, payload, bus, { backoffMs: opts.webhookBackoffMs });
}
