import { readFileSync } from 'node:fs';
import { writeRunInfoAsync } from '@app/storage';
import { AgentSpec, isFatalAgentError } from '@app/agents';
import { formatGoDuration } from './go-duration';
import { errorText } from './runner.errors';
import { ExecContext, finish, post, runStartBody } from './job-finish';
import { ownGroupId } from './job-prepare';
import type { JobResult } from './job-options';
import { restTelemetry } from './usage/rest-telemetry';
import { watchStopRequest } from './job-stop-request';
import { readStoppedBy, signalExitCode } from './stop';

export async function executeRest(ctx: ExecContext): Promise<JobResult> {
  const spec = ctx.spec as Extract<AgentSpec, { kind: 'rest' }>;
  // in_process: the pid is this runner's; a stop leaves STOPPED-BY instead of signalling it (stop-starting.ts)
  ctx.info = { ...ctx.info, pid: process.pid, pgid: ownGroupId(), in_process: true };
  await writeRunInfoAsync(ctx.infoPath, ctx.info, { fence: ctx.opts.fence });
  await post(ctx, 'RUN_START', runStartBody(ctx));
  const timeout = ctx.opts.idleTimeoutMs ?? 0;
  const stopWatch = watchStopRequest(ctx.runDir);
  try {
    return await request(ctx, spec, timeout, [ctx.opts.signal, stopWatch.signal, timeout > 0 ? AbortSignal.timeout(timeout) : undefined]);
  } finally {
    stopWatch.dispose();
  }
}

async function request(ctx: ExecContext, spec: Extract<AgentSpec, { kind: 'rest' }>, timeout: number, maybeSignals: (AbortSignal | undefined)[]): Promise<JobResult> {
  const signals = maybeSignals.filter((s): s is AbortSignal => !!s);
  const prompt = readFileSync(ctx.info.prompt_path!, 'utf8');
  let rest: Awaited<ReturnType<typeof spec.run>>;
  try {
    rest = await spec.run({
      prompt,
      env: ctx.env,
      stdoutPath: ctx.info.stdout_path!,
      stderrPath: ctx.info.stderr_path!,
      signal: signals.length ? AbortSignal.any(signals) : undefined,
    });
  } catch (err) {
    const text = errorText(err);
    const stoppedBy = readStoppedBy(ctx.runDir);
    if (stoppedBy) {
      return finish(ctx, signalExitCode('SIGTERM'), `stopped by ${stoppedBy}`, `agent execution failed: ${text}`, { telemetry: restTelemetry(undefined, err) });
    }
    const timedOut = timeout > 0 && !ctx.opts.signal?.aborted && /abort|timeout/i.test(text);
    return finish(ctx, 1, Buffer.from(text).subarray(0, 200).toString(), `agent execution failed: ${text}`, {
      timedOutNotice: timedOut ? `agent job timed out after ${formatGoDuration(timeout)}` : undefined,
      fatal: isFatalAgentError(err),
      telemetry: restTelemetry(undefined, err),
    });
  }
  return finish(ctx, 0, undefined, undefined, { telemetry: restTelemetry(rest) });
}
