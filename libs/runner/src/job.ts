import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BusWriter } from '@app/messagebus';
import { isStaleEpoch, RunInfo, runFilePaths, runInfoFile, RunsLayout, updateRunInfo, validateProjectId, validateTaskId, writeRunInfo, ZERO_TIME, taskRunsDir, TASK_BUS_FILE } from '@app/storage';
import { buildAgentEnv, runAgentBinDir } from '@app/agents';
import { sandboxModeFor } from '@app/sandbox';
import { AgentChoice, chooseAgent, detectVersion } from './agent-resolution';
import { buildPrompt } from './prompt';
import { acquireRunSlot, RunSlot } from './run-slots';
import { admitByMemory } from './governor/memory-admission';
import { admitChild, type Admitted, type QueuedChild } from './governor/fanout-limit';
import { startTreeLedger } from './governor/fanout-tree';
import { queuedMark } from './governor/queued-mark';
import { holdRun } from './run-holder';
import { RunnerError, errorText } from './runner.errors';
import { clearPendingChild } from './pending-child';
import { inheritedEnv, type JobOptions, type JobResult, type JobRun } from './job-options';
import { conductorUrlFrom, maxConcurrentRuns, prepare, Prepared, runnerSentinel, withMcp } from './job-prepare';
import { ExecContext } from './job-finish';
import { executeCli } from './job-cli';
import { executeRest } from './job-rest';
import { startWebhook } from './job-webhook';
import { withResumedSession } from './usage/run-telemetry';
import { finishIfStoppedBeforeStart, watchStopRequest } from './job-stop-request';
import { ownRootJob, type RootJobOwner } from './root-job-owner';

export { DEFAULT_MAX_DELEGATION_DEPTH, type JobOptions, type JobResult, type JobRun } from './job-options';

/**
 * One agent run (runner-agents.md §2) with the diversification policy (D3): the agent is chosen
 * by the policy when no explicit agent is given, and one fallback run follows a failure when
 * `fallback_on_failure` is set.
 */
export async function runJob(opts: JobRun): Promise<JobResult> {
  let choice: AgentChoice | undefined;
  let layout: RunsLayout;
  try {
    // the job's one layout, handed down to every step (not rebuilt from the root string)
    layout = opts.indexFor(opts.root).layout;
    if (!opts.agent) choice = await chooseAgent(opts.config, layout.taskDir(validateProjectId(opts.projectId), validateTaskId(opts.taskId)));
  } catch (err) {
    return { runId: '', runDir: '', ok: false, error: errorText(err), fatal: true };
  }
  const first = await runSingleJob({ ...opts, agent: opts.agent ?? choice?.agent }, layout);
  if (first.ok || !choice || opts.signal?.aborted) return first;
  const next = choice.policy.fallback(choice.agent);
  if (!next) return first;
  await first.webhook;
  return runSingleJob({ ...opts, agent: next, runDir: undefined }, layout);
}

/** A single run without diversification (§2.1 order of operations). */
export async function runSingleJob(opts: JobRun, layout: RunsLayout): Promise<JobResult> {
  let prepared: Prepared;
  try {
    prepared = await prepare(opts, layout);
  } catch (err) {
    const fatal = err instanceof RunnerError ? err.code !== 'AGENT_FAILED' : true;
    return { runId: '', runDir: '', ok: false, error: errorText(err), fatal, code: err instanceof RunnerError ? err.code : undefined };
  }
  if (!opts.ownTask || opts.fence || opts.parentRunId) return runPreparedJob(opts, prepared);
  let owner: RootJobOwner;
  try {
    owner = await ownRootJob(prepared.taskDir, opts.projectId, opts.taskId);
  } catch (err) {
    return { runId: '', runDir: '', ok: false, error: errorText(err), fatal: true, code: err instanceof RunnerError ? err.code : undefined };
  }
  try {
    return await runPreparedJob({ ...opts, fence: owner.fence }, prepared);
  } finally {
    owner.release();
  }
}

async function runPreparedJob(opts: JobRun, prepared: Prepared): Promise<JobResult> {
  const { layout, taskDir, cwd, agent, spec } = prepared;
  const newRun = (queuedReason?: string) => {
    const { runId, dir: runDir } = opts.runDir ?? layout.allocateRunDir(opts.projectId, opts.taskId);
    if (!opts.parentRunId) startTreeLedger(runDir);
    const paths = runFilePaths(runDir);
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
    // a child's record is written at once (the parent's DONE handling and the fan-out count see it);
    // its runner holds RUNNER.lock until it has recorded the end (child-wait.ts)
    const release = opts.parentRunId ? holdRun(runDir) : () => undefined;
    if (opts.parentRunId) writeRunInfo(runInfoFile(runDir), { ...runnerSentinel(base), queued_reason: queuedReason }, { fsync: false, fence: opts.fence });
    return { runId, runDir, paths, base, release };
  };
  let admitted: Admitted<ReturnType<typeof newRun>>;
  try {
    admitted = opts.parentRunId
      ? await admitChild(layout.root, taskDir, opts.parentRunId, { config: opts.config, noWait: opts.noWait, parentTaskDir: opts.parentTaskDir }, newRun)
      : { created: newRun() };
  } catch (err) {
    if (isStaleEpoch(err)) throw err;
    return { runId: '', runDir: '', ok: false, error: errorText(err), fatal: true, code: err instanceof RunnerError ? err.code : undefined };
  }
  let childSlot = admitted.slot;
  try {
    return await runCreated(opts, prepared, admitted, (slot) => (childSlot = slot));
  } finally {
    childSlot?.release();
    admitted.created.release();
  }
}

/** The rest of a single run once its run folder exists (and, for a child, its record). */
async function runCreated(
  opts: JobRun,
  prepared: Prepared,
  admitted: Admitted<{ runId: string; runDir: string; paths: ReturnType<typeof runFilePaths>; base: Omit<RunInfo, 'pid' | 'pgid' | 'agent_version'> }>,
  gotChildSlot: (slot: RunSlot) => void,
): Promise<JobResult> {
  const { layout, taskDir, prompt, cwd, agent, spec } = prepared;
  const { runId, runDir, paths, base } = admitted.created;
  if (opts.parentRunId) clearPendingChild(opts.pendingMarker);
  const infoPath = runInfoFile(runDir);
  const taskBus = join(taskDir, TASK_BUS_FILE);
  const bus = opts.writers(taskBus, { fence: opts.fence });

  const agentVersion = await detectVersion(spec, inheritedEnv(opts), opts.registry);
  let slot: RunSlot;
  const stopWatch = watchStopRequest(runDir, opts.signal);
  const queued = queuedMark(infoPath, { alreadySet: !!admitted.queued, fence: opts.fence, record: opts.parentRunId ? undefined : runnerSentinel(base) });
  try {
    if (admitted.queued) await waitForChildPlace(opts, admitted.queued, { runId, signal: stopWatch.signal, post: postInfo(bus, opts, runId) }).then(gotChildSlot);
    await admitByMemory({
      onWait: (reason) => queued.set(`queued: ${reason}`),
      floor: opts.config?.defaults?.min_available_memory,
      signal: stopWatch.signal,
      pollMs: opts.memoryPollMs,
      env: inheritedEnv(opts),
      post: postInfo(bus, opts, runId),
    });
    slot = await acquireRunSlot({
      root: layout.root,
      limit: maxConcurrentRuns(opts.config),
      runId,
      signal: stopWatch.signal,
      ticket: opts.queueTicket,
      pollMs: opts.slotPollMs,
      onQueued: () => queued.set(`queued: waiting for a run slot (defaults.max_concurrent_runs = ${maxConcurrentRuns(opts.config)})`),
    }).catch((err: unknown) => {
      throw new Error(`acquire run slot: ${errorText(err)}`);
    });
    await queued.clear().catch((err: unknown) => {
      slot.release();
      throw err;
    });
  } catch (err) {
    const recorded = !!opts.parentRunId || queued.recorded;
    const early = recorded ? await finishIfStoppedBeforeStart({ runId, runDir, infoPath, fence: opts.fence }) : undefined;
    if (early) return early;
    const message = errorText(err);
    if (recorded) {
      await updateRunInfo(infoPath, (i) => ({ ...i, status: 'failed', end_time: new Date(), error_summary: message }), { fence: opts.fence }).catch(() => undefined);
    }
    return { runId, runDir, ok: false, error: message };
  } finally {
    stopWatch.dispose();
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
      base: opts.baseEnv ?? process.env,
      jrun: {
        projectId: opts.projectId,
        taskId: opts.taskId,
        runId,
        parentRunId: opts.parentRunId,
        runsDir: taskRunsDir(taskDir),
        messageBus: taskBus,
        taskFolder: taskDir,
        runFolder: runDir,
        conductorUrl,
      },
      token: agent.config.token,
      binDir: runAgentBinDir(),
      callerEnv: opts.env,
    });
    const agentSpec = withResumedSession(opts.resumeSessionId, agent.config.mcp ? withMcp(spec, env, { root: layout.root, projectId: opts.projectId, taskId: opts.taskId, runId, runDir }) : spec);
    const started: RunInfo = { ...base, start_time: new Date(), agent_version: agentVersion, pid: 0, pgid: 0 };
    if (!opts.parentRunId) writeRunInfo(infoPath, { ...runnerSentinel(started), agent_version: agentVersion }, { fsync: false, fence: opts.fence });
    const ctx: ExecContext = { opts, runId, runDir, infoPath, bus, info: started, env, cwd, spec: agentSpec, taskDir, sandbox: sandboxModeFor(opts.config, agent.name ? opts.config?.agents[agent.name] : undefined, opts.projectId) };
    const early = await finishIfStoppedBeforeStart({ runId, runDir, infoPath, fence: opts.fence });
    const result = early ?? (spec.kind === 'cli' ? await executeCli(ctx) : await executeRest(ctx));
    result.webhook = startWebhook(opts, result, bus);
    result.queueTicket = slot.ticket;
    return result;
  } finally {
    slot.release();
  }
}

const postInfo = (bus: BusWriter, opts: JobOptions, runId: string) => (type: string, body: string): Promise<void> =>
  bus.append({ type, project_id: opts.projectId, task_id: opts.taskId, run_id: runId, body }).then(() => undefined);

/**
 * A child queued by max_children_per_run (issue #33) waits in its parent's FIFO slot queue; its
 * run-info shows `queued` with the reason until it is admitted (cleared once every wait is over).
 */
async function waitForChildPlace(
  opts: JobOptions,
  queued: QueuedChild,
  run: { runId: string; signal: AbortSignal; post(type: string, body: string): Promise<void> },
): Promise<RunSlot> {
  await run.post('INFO', queued.reason);
  const slot = await acquireRunSlot({
    root: opts.root,
    limit: queued.limit,
    runId: queued.waiterId,
    queueBase: queued.queueBase,
    state: queued.state,
    signal: run.signal,
    pollMs: opts.slotPollMs,
  });
  await run.post('INFO', 'admitted: a place among the parent run\'s children is free; starting');
  return slot;
}
