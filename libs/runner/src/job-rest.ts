import { readFileSync } from 'node:fs';
import { writeRunInfoAsync } from '@app/storage';
import { AgentSpec, isFatalAgentError } from '@app/agents';
import { formatGoDuration } from './go-duration';
import { errorText } from './runner.errors';
import { ExecContext, finish, post, runStartBody } from './job-finish';
import { ownGroupId } from './job-prepare';
import type { JobResult } from './job-options';
import { restTelemetry } from './usage/rest-telemetry';

export async function executeRest(ctx: ExecContext): Promise<JobResult> {
  const spec = ctx.spec as Extract<AgentSpec, { kind: 'rest' }>;
  ctx.info = { ...ctx.info, pid: process.pid, pgid: ownGroupId() };
  await writeRunInfoAsync(ctx.infoPath, ctx.info);
  await post(ctx, 'RUN_START', runStartBody(ctx));
  const timeout = ctx.opts.idleTimeoutMs ?? 0;
  const signals = [ctx.opts.signal, timeout > 0 ? AbortSignal.timeout(timeout) : undefined].filter((s): s is AbortSignal => !!s);
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
    const timedOut = timeout > 0 && !ctx.opts.signal?.aborted && /abort|timeout/i.test(text);
    return finish(ctx, 1, Buffer.from(text).subarray(0, 200).toString(), `agent execution failed: ${text}`, {
      timedOutNotice: timedOut ? `agent job timed out after ${formatGoDuration(timeout)}` : undefined,
      fatal: isFatalAgentError(err),
      telemetry: restTelemetry(undefined, err),
    });
  }
  return finish(ctx, 0, undefined, undefined, { telemetry: restTelemetry(rest) });
}
