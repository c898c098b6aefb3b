import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isStaleEpoch, RunInfo, writeRunInfo, writeRunInfoAsync } from '@app/storage';
import { AgentSpec, errorSummaryForExit, extractOutput, GEMINI_FLAG_REJECTED_SUMMARY } from '@app/agents';
import type { RunSandbox } from './job-sandbox';
import type { AgentHandle } from './agent-executor';
import { createAgentExecutor } from './runner.providers';
import { formatGoDuration } from './go-duration';
import { collectProcessTree } from './process-tree';
import { errorText } from './runner.errors';
import { readStoppedBy, signalExitCode, STOPPED_BY_FILE, terminateProcesses } from './stop';
import { ExecContext, finish, post, runStartBody } from './job-finish';
import { ownGroupId } from './job-prepare';
import type { JobResult } from './job-options';

/* A CLI agent's run: spawn in its own process group, stop on abort, idle-output watchdog. */

export async function executeCli(ctx: ExecContext): Promise<JobResult> {
  const spec = ctx.spec as Extract<AgentSpec, { kind: 'cli' }>;
  const executor = ctx.opts.executor ?? createAgentExecutor();
  let handle: AgentHandle;
  let sandbox: RunSandbox | undefined;
  try {
    // the sandbox lib (proxy, bwrap argv) loads only for a sandboxed agent: not on the plain start path
    if (ctx.sandbox === 'bwrap') sandbox = await (await import('./job-sandbox')).openRunSandbox(ctx, spec.resolvedPath || spec.command, spec.args);
    handle = await executor.start({
      runId: ctx.runId,
      command: sandbox?.command ?? spec.resolvedPath ?? spec.command,
      args: sandbox?.args ?? spec.args,
      cwd: ctx.cwd,
      env: sandbox?.env ?? ctx.env,
      stdinPath: ctx.info.prompt_path!,
      stdoutPath: ctx.info.stdout_path!,
      stderrPath: ctx.info.stderr_path!,
      outliveRunner: ctx.opts.outliveRunner,
    });
  } catch (err) {
    await sandbox?.close();
    const info: RunInfo = { ...ctx.info, pid: process.pid, pgid: ownGroupId(), status: 'failed', exit_code: -1, end_time: new Date() };
    await writeRunInfoAsync(ctx.infoPath, info, { fence: ctx.opts.fence });
    if (err instanceof Error && err.name === 'SandboxUnavailableError') {
      await writeRunInfoAsync(ctx.infoPath, { ...info, error_summary: err.message }, { fence: ctx.opts.fence });
      await post(ctx, 'RUN_CRASH', `run failed before start\nrun_dir: ${ctx.runDir}\n${err.message}`).catch(() => undefined);
      return { runId: ctx.runId, runDir: ctx.runDir, info: { ...info, error_summary: err.message }, ok: false, fatal: true, error: err.message };
    }
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
    if (ctx.opts.fence && !ctx.opts.fence.isCurrent()) return; // a stale owner signals nothing
    const reason = ctx.opts.signal?.reason;
    const stopReason = typeof reason === 'string' ? reason : 'runner shutdown';
    if (!existsSync(join(ctx.runDir, STOPPED_BY_FILE))) writeFileSync(join(ctx.runDir, STOPPED_BY_FILE), `${stopReason}\n`);
    const tree = collectProcessTree([handle.pgid]);
    termination = terminateProcesses([handle.pgid], tree, ctx.opts.stopGraceMs ?? 30_000);
  };
  try {
    // Synchronously, before the agent can do anything observable: from here on readers and
    // `stop` see the agent's pid, not the runner's sentinel record. Durable (issue #31): after a
    // power loss the next start finds the agent's pid, not a sentinel without one.
    writeRunInfo(ctx.infoPath, ctx.info, { fence: ctx.opts.fence });
    // recorded (and watched since the spawn): the agent may begin (agent-executor.ts, the gate)
    handle.release?.();
    await post(ctx, 'RUN_START', runStartBody(ctx));
  } catch (err) {
    // the agent this runner just started (a stale owner's too: nobody else knows of it)
    handle.signal('SIGKILL');
    await exitPromise;
    if (isStaleEpoch(err)) {
      await sandbox?.close();
      throw err;
    }
    // Best effort (the disk just refused a write): record the run as failed, so that it does not
    // read as running while the runner's own process group lives on (issue #31 fault suite).
    const failed: RunInfo = { ...ctx.info, status: 'failed', exit_code: -1, end_time: new Date() };
    try {
      writeRunInfo(ctx.infoPath, failed, { fsync: false });
    } catch {
      // the sentinel stays; the error below is the one to report
    }
    await sandbox?.close();
    return { runId: ctx.runId, runDir: ctx.runDir, info: failed, ok: false, error: errorText(err) };
  }
  // A stop that read the sentinel could not signal the agent; it left STOPPED-BY for us.
  if (ctx.opts.signal?.aborted || readStoppedBy(ctx.runDir)) onAbort();
  else ctx.opts.signal?.addEventListener('abort', onAbort, { once: true });
  const idle = watchIdle(ctx, handle);
  const exit = await exitPromise;
  await sandbox?.close();
  idle.stop();
  // the leader is gone; wait until the rest of its tree is too (no orphans after a stop)
  await Promise.all([termination, idle.termination()]);
  ctx.opts.signal?.removeEventListener('abort', onAbort);
  ctx.opts.fence?.check(); // woken after a takeover (SIGSTOP, issue #31): stop here, write nothing

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
    if (!fired && Date.now() - lastChange >= timeout && (!ctx.opts.fence || ctx.opts.fence.isCurrent())) {
      fired = true;
      const tree = collectProcessTree([handle.pgid]);
      killing = terminateProcesses([handle.pgid], tree, 0);
    }
  }, interval);
  return { stop: () => clearInterval(timer), timedOut: () => fired, termination: () => killing };
}
