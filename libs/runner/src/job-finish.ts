import { readFileSync } from 'node:fs';
import { BusWriter } from '@app/messagebus';
import { RunInfo, SandboxMode, updateRunInfo } from '@app/storage';
import { AgentSpec, ensureOutputFile, StreamTelemetry } from '@app/agents';
import { errorText } from './runner.errors';
import type { JobOptions, JobResult } from './job-options';
import { applyTelemetry, readRunTelemetry } from './usage/run-telemetry';

export interface ExecContext {
  opts: JobOptions;
  runId: string;
  runDir: string;
  infoPath: string;
  bus: BusWriter;
  info: RunInfo;
  env: Record<string, string>;
  cwd: string;
  spec: AgentSpec;
  /** The task folder and the run's sandbox mode (docs/sandbox.md); absent = none. */
  taskDir?: string;
  sandbox?: SandboxMode;
}

export function runStartBody(ctx: ExecContext): string {
  const i = ctx.info;
  return `run started\nrun_dir: ${ctx.runDir}\nprompt: ${i.prompt_path}\nstdout: ${i.stdout_path}\nstderr: ${i.stderr_path}\noutput: ${i.output_path}`;
}

export async function post(ctx: ExecContext, type: string, body: string): Promise<void> {
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

/** §2.5 steps 10–13: locked run-info update, output.md fallback, RUN_STOP/RUN_CRASH, timeout notice. */
export async function finish(
  ctx: ExecContext,
  exitCode: number,
  summary: string | undefined,
  error: string | undefined,
  extra: { timedOutNotice?: string; fatal?: boolean; telemetry?: StreamTelemetry },
): Promise<JobResult> {
  ctx.opts.fence?.check(); // a stale owner writes nothing, not even output.md
  const status = exitCode === 0 && !error ? 'completed' : 'failed';
  const telemetry = extra.telemetry ?? readRunTelemetry(ctx.spec.type, ctx.info, status === 'failed');
  // output.md first: whoever reads the run as finished finds its output, and a crash between the
  // two steps leaves a running run (failed by reconciliation), never a finished one without output
  let outputError: string | undefined;
  try {
    ensureOutputFile(ctx.runDir);
  } catch (err) {
    outputError = errorText(err);
  }
  const info = await updateRunInfo(ctx.infoPath, (i) => {
    applyTelemetry(i, telemetry);
    i.exit_code = exitCode;
    i.end_time = new Date();
    i.status = status;
    i.error_summary = status === 'failed' ? summary : undefined;
    i.starting = i.in_process = undefined; // records of a running run only
    return i;
  }, { fence: ctx.opts.fence });
  if (outputError) return { runId: ctx.runId, runDir: ctx.runDir, info, ok: false, error: outputError };
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
