import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AppConfig, RunInfo, type RunsLayout, validateProjectId, validateRunId, validateTaskId, writeTaskPromptIfAbsent, taskRunsDir } from '@app/storage';
import { AgentSpec, SelectedAgent, isFatalAgentError, runAgentBinDir, setupAgentMcp } from '@app/agents';
import { resolveSpec, selectAgent } from './agent-resolution';
import { RunnerError, errorText } from './runner.errors';
import { refuseLiveRootRun } from './live-run';
import { inheritedEnv, JobOptions } from './job-options';
import { checkDelegationDepth } from './governor/depth-limit';
import { checkTreeTotal } from './governor/fanout-limit';

/* The steps of a job before its agent starts: checks that may refuse it, the runner's own record. */

/**
 * A `running` record owned by this runner process, written before the agent exists: for child
 * runs at once (the parent's DONE handling must see them), for root runs once they hold a slot,
 * so no reader ever sees an agent's effects (DONE, output) before the run itself. If the runner
 * dies first, reconciliation finds its pid dead and marks the run failed. `starting` tells `stop`
 * that pid/pgid are the runner's: it leaves STOPPED-BY instead of signalling (stop-request.ts).
 */
export function runnerSentinel(base: Omit<RunInfo, 'pid' | 'pgid' | 'agent_version'>): RunInfo {
  return { ...base, pid: process.pid, pgid: ownGroupId(), agent_version: '', process_ownership: 'managed', starting: true };
}

export function ownGroupId(): number {
  try {
    return Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[2]) || process.pid;
  } catch {
    return process.pid;
  }
}

export function conductorUrlFrom(opts: JobOptions): string | undefined {
  if (opts.conductorUrl) return opts.conductorUrl;
  const api = opts.config?.api;
  if (api && api.port && api.port > 0) {
    const host = !api.host || api.host === '0.0.0.0' ? '127.0.0.1' : api.host;
    return `http://${host}:${api.port}`;
  }
  return undefined;
}

export function maxConcurrentRuns(config?: AppConfig): number {
  const value = (config?.defaults as { max_concurrent_runs?: number } | undefined)?.max_concurrent_runs;
  return typeof value === 'number' && value > 0 ? value : 0;
}

function failure(message: string, fatal: boolean, code: RunnerError['code'] = fatal ? 'FATAL_AGENT' : 'AGENT_FAILED'): RunnerError {
  return new RunnerError(code, message);
}

export interface Prepared {
  layout: RunsLayout;
  taskDir: string;
  prompt: string;
  cwd: string;
  agent: SelectedAgent;
  spec: AgentSpec;
}

/** Steps that must succeed before anything is written for the run; errors are thrown. */
export async function prepare(opts: JobOptions, layout: RunsLayout): Promise<Prepared> {
  validateProjectId(opts.projectId);
  validateTaskId(opts.taskId);
  // D18: these ids are stored in run-info.yaml and followed through the runs root (parent chain).
  if (opts.parentRunId) validateRunId(opts.parentRunId);
  if (opts.previousRunId) validateRunId(opts.previousRunId);
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
    spec = await resolveSpec(agent, inheritedEnv(opts), cwd, opts.registry);
  } catch (err) {
    throw failure(errorText(err), isFatalAgentError(err));
  }
  // a root run never starts next to a live agent of a dead runner (issue #11)
  // (a root job that owns its task checks this under the task lock instead: root-job-owner.ts)
  if (!opts.parentRunId && !opts.ownTask) refuseLiveRootRun(taskDir, opts.projectId, opts.taskId);
  if (opts.parentRunId) {
    checkDelegationDepth(layout.root, taskDir, opts.parentRunId, { jobLimit: opts.maxDelegationDepth, config: opts.config });
    // refused here with nothing written; checked again under the tree's lock when the run is created (job.ts)
    checkTreeTotal(layout.root, taskDir, opts.parentRunId, { config: opts.config, parentTaskDir: opts.parentTaskDir });
  }
  mkdirSync(taskRunsDir(taskDir), { recursive: true, mode: 0o755 });
  writeTaskPromptIfAbsent(taskDir, prompt);
  return { layout, taskDir, prompt, cwd, agent, spec };
}

/** `mcp: true`: the agent CLI gets our MCP server (`run-agent mcp` scoped to this run) in its config. */
export function withMcp(spec: AgentSpec, env: Record<string, string>, run: { root: string; projectId: string; taskId: string; runId: string; runDir: string }): AgentSpec {
  if (spec.kind !== 'cli') return spec;
  const binDir = runAgentBinDir();
  const setup = setupAgentMcp(spec.type, spec.args, run.runDir, { ...run, runAgentPath: binDir ? join(binDir, 'run-agent') : 'run-agent' });
  if (!setup) return spec;
  Object.assign(env, setup.env);
  return { ...spec, args: setup.args };
}
