import { Inject } from '@nestjs/common';
import { resolve } from 'node:path';
import { Command, CommandRunner, Option, SubCommand } from 'nest-commander';
import { MessageBusService } from '@app/messagebus';
import { RunnerService } from '@app/runner';
import { formatWorkflowResult, runWorkflow } from '@app/orchestration';
import { STORAGE_INDEX_FACTORY, type StorageIndexFactory, validateTaskId } from '@app/storage';
import { agentCallerEnv, checkDir, loadRunConfig, optionalDuration, runRoot, withParentOptions } from '../engine/job-common';
import { intFlag, required } from './flags';
import { resolveProject } from './project-scope';
import type { WorkflowRunFlags } from './workflow-flags';

@SubCommand({
  name: 'run',
  description:
    'Run the THE_PROMPT_v5 stages (0 Preflight … 12 Completion) of a task, one agent job per stage, keeping their state in ' +
    'stage-state.yaml. A failed stage stops the workflow (exit 1). --resume skips completed stages and re-runs stages ' +
    'that failed or were left running by an interrupted run.',
})
export class WorkflowRunCommand extends CommandRunner {
  constructor(
    private readonly runner: RunnerService,
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
    private readonly bus: MessageBusService,
  ) {
    super();
  }

  async run(_args: string[], options: WorkflowRunFlags = {}): Promise<void> {
    const flags = withParentOptions(this.command, options);
    const taskId = validateTaskId(required(flags.task, '--task'));
    const fromStage = flags.fromStage !== undefined ? intFlag(flags.fromStage, '--from-stage') : undefined;
    const toStage = flags.toStage !== undefined ? intFlag(flags.toStage, '--to-stage') : undefined;
    const idleTimeoutMs = optionalDuration(flags.timeout, '--timeout');
    const cwd = checkDir(flags.cwd, 'working directory');
    const loaded = flags.dryRun && !flags.config ? {} : loadRunConfig(flags.config);
    const root = runRoot(flags.root, loaded);
    const projectId = await resolveProject(flags.project, root);
    const result = await runWorkflow({
      layout: this.indexFor(root).layout,
      writers: this.bus.writers,
      projectId,
      taskId,
      template: flags.template,
      fromStage,
      toStage,
      resume: flags.resume,
      dryRun: flags.dryRun,
      statePath: flags.stateFile ? resolve(flags.stateFile) : undefined,
      agent: flags.agent,
      config: loaded.config,
      cwd,
      env: agentCallerEnv(loaded),
      idleTimeoutMs,
      runJob: (opts) => this.runner.runJob(opts),
    });
    if (flags.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else process.stdout.write(formatWorkflowResult(result));
    if (result.error) throw new Error(result.error);
  }

  @Option({ flags: '--task <id>', description: 'task id task-YYYYMMDD-HHMMSS-slug (required)' })
  parseTask(v: string): string {
    return v;
  }

  @Option({ flags: '--project <id>', description: 'project id (default: $JRUN_PROJECT_ID, the working directory, its home-folders.md link, or interactive init on a terminal)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--config <file>', description: 'config file (default: $CONDUCTOR_CONFIG, ./config.yaml, ./config.yml, ~/.run-agent/conductor-loop.hcl)' })
  parseConfig(v: string): string {
    return v;
  }

  @Option({ flags: '--agent <name>', description: 'config agent name or agent type for every stage (default: defaults.agent, first configured agent)' })
  parseAgent(v: string): string {
    return v;
  }

  @Option({ flags: '--cwd <dir>', description: 'working directory of the agents (default: the task folder)' })
  parseCwd(v: string): string {
    return v;
  }

  @Option({ flags: '--template <name>', description: 'workflow template, case-insensitive; only THE_PROMPT_v5 (default THE_PROMPT_v5)' })
  parseTemplate(v: string): string {
    return v;
  }

  @Option({ flags: '--from-stage <n>', description: 'first stage to run, 0..12 (default 0)' })
  parseFromStage(v: string): string {
    return v;
  }

  @Option({ flags: '--to-stage <n>', description: 'last stage to run, 0..12, not below --from-stage (default 12)' })
  parseToStage(v: string): string {
    return v;
  }

  @Option({ flags: '--resume', description: 'continue a previous run: skip completed stages, re-run failed or interrupted (left running) ones' })
  parseResume(): boolean {
    return true;
  }

  @Option({ flags: '--dry-run', description: 'print the planned stages; run nothing and write nothing' })
  parseDryRun(): boolean {
    return true;
  }

  @Option({ flags: '--timeout <duration>', description: 'per stage: kill the agent after this long without output (Go duration; default: none)' })
  parseTimeout(v: string): string {
    return v;
  }

  @Option({ flags: '--state-file <file>', description: 'workflow state file (default: <task>/workflow/the-prompt-v5/stage-state.yaml)' })
  parseStateFile(v: string): string {
    return v;
  }

  @Option({ flags: '--json', description: 'print the result (stages planned, executed, skipped and the state) as JSON' })
  parseJson(): boolean {
    return true;
  }
}

@Command({ name: 'workflow', description: 'Multi-stage workflows over one task (run)', subCommands: [WorkflowRunCommand] })
export class WorkflowCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp();
  }
}
