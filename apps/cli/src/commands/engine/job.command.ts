import { Command, Option } from 'nest-commander';
import { Inject } from '@nestjs/common';
import { CHANGE_FEED, ChangeFeed, followRunStdout, RunsLayout, StorageError, validateRunId } from '@app/storage';
import { checkAgentName, hasSettings, JobResult, prepareJobWorktree, RunnerService, withJobBudget, withJobCriteria } from '@app/runner';
import { UsageError } from '../../common/cli-errors';
import { collect } from './support/options';
import {
  RunFlags,
  agentCallerEnv,
  asCliError,
  checkDir,
  loadRunConfig,
  optionalDuration,
  promptFromFlags,
  resolveScope,
  runRoot,
} from './job-common';
import { JobBatchCommand } from './job-batch.command';
import { budgetFlags, criteriaFlags, isolationFromFlags, WorktreeFlagParsers } from './task-options';

interface JobFlags extends Omit<RunFlags, 'prompt' | 'promptFile'> {
  task?: string;
  // Collected as lists; the last one wins.
  prompt?: string[];
  promptFile?: string[];
  parentRunId?: string;
  previousRunId?: string;
  runId?: string;
  follow?: boolean;
  worktree?: boolean;
  repo?: string;
  base?: string;
  paths?: string[];
  maxTokens?: string;
  maxCostUsd?: string;
  maxWallTime?: string;
  doneWhen?: string[];
  doneTimeout?: string;
  noWait?: boolean;
  wait?: boolean;
}

/** The run folder named by --run-id (RunsLayout.adoptRunDir); one that already holds a run is a usage error. */
function adoptRunDir(layout: RunsLayout, projectId: string, taskId: string, runId: string): { runId: string; dir: string } {
  try {
    return layout.adoptRunDir(projectId, taskId, runId);
  } catch (err) {
    if (err instanceof StorageError && err.code === 'CONFLICT') throw new UsageError(err.message);
    throw err;
  }
}

@Command({
  name: 'job',
  subCommands: [JobBatchCommand],
  description:
    'Run one agent once (no restart loop) in a task: creates a run folder with prompt.md, run-info.yaml, ' +
    'agent-stdout.txt/agent-stderr.txt and output.md, and posts RUN_START/RUN_STOP to the task bus. ' +
    'Inside an agent, project/task/parent run come from the JRUN_* variables.',
})
export class JobCommand extends WorktreeFlagParsers {
  constructor(
    private readonly runner: RunnerService,
    @Inject(CHANGE_FEED) private readonly feed: ChangeFeed,
  ) {
    super();
  }

  async run(_args: string[], flags: JobFlags = {}): Promise<void> {
    try {
      await this.runJob(flags);
    } catch (err) {
      throw asCliError(err);
    }
  }

  private async runJob(all: JobFlags): Promise<void> {
    const flags = { ...all, task: all.task, prompt: all.prompt?.at(-1), promptFile: all.promptFile?.at(-1) };
    const prompt = promptFromFlags(flags);
    if (!prompt) throw new UsageError('prompt is empty: pass --prompt or --prompt-file');
    const idleTimeoutMs = optionalDuration(flags.timeout, '--timeout');
    const criteria = criteriaFlags(flags);
    const cwd = checkDir(flags.cwd, 'working directory');
    const loaded = loadRunConfig(flags.config);
    // an agent typo (or no config and no agent) is a usage error before any folder exists; without
    // --agent a configured diversification policy picks the agent when the run starts
    if (flags.agent?.trim() || !loaded.config) checkAgentName(loaded.config, flags.agent);
    const root = runRoot(flags.root, loaded);
    const scope = resolveScope(flags, root, { generate: true });
    if (scope.generated) process.stderr.write(`task: ${scope.taskId}\n`);
    const parentRunId = flags.parentRunId?.trim() || process.env.JRUN_ID?.trim() || undefined;
    // invalid input is a usage error (exit 2) before anything is written, as in wrap
    try {
      if (parentRunId) validateRunId(parentRunId);
      if (flags.previousRunId?.trim()) validateRunId(flags.previousRunId.trim());
      if (flags.runId !== undefined) validateRunId(flags.runId);
    } catch (err) {
      throw asCliError(err);
    }
    const layout = new RunsLayout(root);
    // sub-agent jobs run in the worktree of their task (or of the task that started them) unless --worktree
    const wt = await prepareJobWorktree({
      root,
      projectId: scope.projectId,
      taskId: scope.taskId,
      taskDir: layout.taskDir(scope.projectId, scope.taskId),
      isolation: isolationFromFlags(flags),
      config: loaded.config,
      agent: flags.agent,
      cwd,
      parentTaskDir: process.env.JRUN_TASK_FOLDER?.trim() || undefined,
    });
    const runDir = flags.runId !== undefined ? adoptRunDir(layout, scope.projectId, scope.taskId, flags.runId) : flags.follow ? layout.allocateRunDir(scope.projectId, scope.taskId) : undefined;
    const budget = budgetFlags(flags);
    const env = wt ? { ...agentCallerEnv(loaded), ...wt.env } : agentCallerEnv(loaded);
    const taskDir = layout.taskDir(scope.projectId, scope.taskId);
    const run = () => this.runner.runJob({
      root,
      projectId: scope.projectId,
      taskId: scope.taskId,
      prompt,
      config: loaded.config,
      agent: flags.agent,
      cwd: wt?.cwd ?? cwd,
      worktree: wt?.fields,
      parentRunId,
      parentTaskDir: process.env.JRUN_TASK_FOLDER?.trim() || undefined,
      noWait: flags.noWait === true || flags.wait === false,
      previousRunId: flags.previousRunId?.trim() || undefined,
      idleTimeoutMs,
      conductorUrl: flags.conductorUrl,
      env,
      runDir,
      // not under a task loop: this job owns the task while it runs, its writes fenced (issue #31)
      ownTask: true,
    });
    // a DONE written by this job counts only once the task's completion criteria pass (issue #33)
    const start = () => withJobCriteria({ root, projectId: scope.projectId, taskId: scope.taskId, cwd: wt?.cwd ?? cwd ?? taskDir, env: env ?? {}, config: loaded.config, ...criteria }, run);
    const pending = hasSettings(budget)
      ? withJobBudget({ root, projectId: scope.projectId, taskId: scope.taskId, config: loaded.config, budget }, start)
      : start().then((result) => ({ result, exceeded: undefined }));
    if (runDir && flags.follow) await followRunStdout(runDir.dir, pending, { feed: this.feed, write: (text) => void process.stdout.write(text) });
    const { result: checked, exceeded }: { result: { result: JobResult; rejected?: string }; exceeded?: string } = await pending;
    const { result, rejected } = checked;
    // D14: a short-lived job waits for its run_stop webhook delivery (bounded by timeout and retries).
    await result.webhook;
    if (exceeded) throw new Error(exceeded);
    if (!result.ok) throw Object.assign(new Error(result.error ?? 'agent execution failed'), { code: result.code });
    if (rejected) throw new Error(rejected);
  }

  @Option({ flags: '--done-when <command>', description: 'completion criterion (repeatable): a shell command run in the task\'s working tree when this job\'s agent writes DONE; a failure sets DONE aside and the job fails (stored in TASK-SETTINGS.yaml)' })
  parseDoneWhen(v: string, prev?: string[]): string[] {
    return collect(v, prev);
  }

  @Option({ flags: '--done-timeout <duration>', description: 'timeout of each --done-when command (default: defaults.done_criteria_timeout, 10m)' })
  parseDoneTimeout(v: string): string {
    return v;
  }

  @Option({ flags: '--max-tokens <n>', description: 'budget of this job\'s tree (the run and its child runs): input + output tokens; crossing it stops the tree and posts BUDGET_EXCEEDED' })
  parseMaxTokens(v: string): string {
    return v;
  }

  @Option({ flags: '--max-cost-usd <usd>', description: 'budget of this job\'s tree in US dollars, as reported by the agents' })
  parseMaxCostUsd(v: string): string {
    return v;
  }

  @Option({ flags: '--max-wall-time <duration>', description: 'budget of this job\'s tree in wall time' })
  parseMaxWallTime(v: string): string {
    return v;
  }

  @Option({ flags: '--agent <name>', description: 'config agent name or agent type: claude, codex, gemini, perplexity, xai (default: diversification policy, defaults.agent, first configured agent)' })
  parseAgent(v: string): string {
    return v;
  }

  @Option({ flags: '--prompt <text>', description: 'prompt text' })
  parsePrompt(v: string, prev?: string[]): string[] {
    return collect(v, prev);
  }

  @Option({ flags: '--prompt-file <file>', description: 'read the prompt from this file (wins over --prompt)' })
  parsePromptFile(v: string, prev?: string[]): string[] {
    return collect(v, prev);
  }

  @Option({ flags: '--cwd <dir>', description: 'working directory of the agent (default: the task folder)' })
  parseCwd(v: string): string {
    return v;
  }

  @Option({ flags: '--conductor-url <url>', description: 'conductor server URL given to the agent as JRUN_CONDUCTOR_URL (default: from config api.host/api.port)' })
  parseConductorUrl(v: string): string {
    return v;
  }

  @Option({ flags: '--parent-run-id <id>', description: 'parent run id, making this a child run (default: $JRUN_ID)' })
  parseParentRunId(v: string): string {
    return v;
  }

  @Option({ flags: '--no-wait', description: 'a child beyond the parent\'s max_children_per_run is refused (exit 2) instead of queued until a place is free' })
  parseNoWait(): boolean {
    return false;
  }

  @Option({ flags: '--previous-run-id <id>', description: 'run id this run continues (restart chain)' })
  parsePreviousRunId(v: string): string {
    return v;
  }

  @Option({ flags: '--run-id <id>', description: 'run id of this run (default: generated); its run folder may exist already but must hold no run yet (`run-agent mcp` starts sub-tasks so)' })
  parseRunId(v: string): string {
    return v;
  }

  @Option({ flags: '--timeout <duration>', description: 'kill the agent after this long without output (Go duration, e.g. 30m; REST agents: total deadline; default: none)' })
  parseTimeout(v: string): string {
    return v;
  }

  @Option({ flags: '-f, --follow', description: 'print the agent output while it runs' })
  parseFollow(): boolean {
    return true;
  }
}
