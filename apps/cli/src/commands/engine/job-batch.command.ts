import { CommandRunner, Option, SubCommand } from 'nest-commander';
import { generateTaskId, validateTaskId } from '@app/storage';
import { checkAgentName, RunnerService } from '@app/runner';
import { UsageError } from '../../common/cli-errors';
import { collect } from './support/options';
import { batchPrompts, list, type BatchFlags } from './job-batch-flags';
import { agentCallerEnv, checkDir, loadRunConfig, optionalDuration, resolveScope, runRoot, withParentOptions } from './job-common';

@SubCommand({
  name: 'batch',
  description: 'Run several jobs one after another, each in its own task (one per --prompt / --prompt-file)',
})
export class JobBatchCommand extends CommandRunner {
  constructor(private readonly runner: RunnerService) {
    super();
  }

  async run(_args: string[], options: BatchFlags = {}): Promise<void> {
    const flags = withParentOptions(this.command, options);
    await this.runBatch(flags);
  }

  private async runBatch(flags: BatchFlags): Promise<void> {
    const prompts = batchPrompts(flags);
    const tasks = list(flags.task);
    if (tasks.length > 0 && tasks.length !== prompts.length) {
      throw new UsageError(`--task count (${tasks.length}) must match prompt count (${prompts.length})`);
    }
    tasks.forEach((t) => validateTaskId(t));
    const idleTimeoutMs = optionalDuration(flags.timeout, '--timeout');
    const cwd = checkDir(flags.cwd, 'working directory');
    const loaded = loadRunConfig(flags.config);
    if (flags.agent?.trim() || !loaded.config) checkAgentName(loaded.config, flags.agent);
    const root = runRoot(flags.root, loaded);
    const { projectId } = resolveScope({ project: flags.project, task: tasks[0] }, root, { generate: true });
    let firstError: string | undefined;
    for (let i = 0; i < prompts.length; i++) {
      const taskId = tasks[i] ?? generateTaskId();
      const result = await this.runner.runJob({
        root,
        projectId,
        taskId,
        prompt: prompts[i],
        config: loaded.config,
        agent: flags.agent,
        cwd,
        parentRunId: flags.parentRunId?.trim() || undefined,
        idleTimeoutMs,
        conductorUrl: flags.conductorUrl,
        env: agentCallerEnv(loaded),
      });
      await result.webhook;
      if (result.ok) {
        process.stdout.write(`batch item ${i + 1}/${prompts.length} completed: ${taskId}\n`);
        continue;
      }
      const error = result.error ?? 'agent execution failed';
      if (!flags.continueOnFail) throw new Error(`batch item ${i + 1} (task ${taskId}): ${error}`);
      process.stderr.write(`batch item ${i + 1} failed (task ${taskId}): ${error}\n`);
      firstError ??= error;
    }
    if (firstError) throw new Error(`one or more batch items failed: ${firstError}`);
  }

  @Option({ flags: '--task <id>', description: 'task id of each item, in order (repeatable; default: generated per item)' })
  parseTask(v: string, prev?: string[]): string[] {
    return collect(v, prev);
  }

  @Option({ flags: '--prompt <text>', description: 'prompt of one item (repeatable)' })
  parsePrompt(v: string, prev?: string[]): string[] {
    return collect(v, prev);
  }

  @Option({ flags: '--prompt-file <file>', description: 'file holding the prompt of one item (repeatable; run after all --prompt items)' })
  parsePromptFile(v: string, prev?: string[]): string[] {
    return collect(v, prev);
  }

  @Option({ flags: '--project <id>', description: 'project id (default: from JRUN_* or the working directory)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--config <file>', description: 'config file' })
  parseConfig(v: string): string {
    return v;
  }

  @Option({ flags: '--agent <name>', description: 'config agent name or agent type' })
  parseAgent(v: string): string {
    return v;
  }

  @Option({ flags: '--cwd <dir>', description: 'working directory of the agents (default: each task folder)' })
  parseCwd(v: string): string {
    return v;
  }

  @Option({ flags: '--conductor-url <url>', description: 'conductor server URL given to the agents' })
  parseConductorUrl(v: string): string {
    return v;
  }

  @Option({ flags: '--parent-run-id <id>', description: 'parent run id of every item' })
  parseParentRunId(v: string): string {
    return v;
  }

  @Option({ flags: '--timeout <duration>', description: 'idle-output timeout per item (Go duration; default: none)' })
  parseTimeout(v: string): string {
    return v;
  }

  @Option({ flags: '--continue-on-fail', description: 'keep going after a failed item (exit 1 at the end)' })
  parseContinueOnFail(): boolean {
    return true;
  }
}
