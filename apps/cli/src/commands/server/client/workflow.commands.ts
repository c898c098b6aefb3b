import { CommandRunner, Option, SubCommand } from 'nest-commander';
import { ClientOptions, runWorkflowOnServer, ServerClient, workflowStagePlan } from '@app/client';
import { intFlag, required } from '../../orchestration/flags';
import { ClientCommand } from './client-command';

interface WorkflowRunOptions extends ClientOptions {
  project?: string;
  task?: string;
  agent?: string;
  fromStage?: string;
  toStage?: string;
  dryRun?: boolean;
}

@SubCommand({
  name: 'run',
  description:
    'Create the THE_PROMPT_v5 stages (0 Preflight … 12 Completion) of a task on a conductor server: one task per stage, ' +
    'id <task>-sNN, each depending on the previous stage, prompt = the stage prompt of `run-agent workflow run`. The ' +
    'server runs them one after the other. --dry-run prints the plan and contacts nothing.',
})
export class ServerWorkflowRunCommand extends ClientCommand<WorkflowRunOptions> {
  async execute(_args: string[], opts: WorkflowRunOptions, client: ServerClient): Promise<void> {
    const projectId = required(opts.project, '--project');
    const taskId = required(opts.task, '--task');
    const fromStage = opts.fromStage !== undefined ? intFlag(opts.fromStage, '--from-stage') : undefined;
    const toStage = opts.toStage !== undefined ? intFlag(opts.toStage, '--to-stage') : undefined;
    const agent = opts.agent !== undefined ? required(opts.agent, '--agent') : 'claude';
    const plan = workflowStagePlan({ projectId, taskId, agent, fromStage, toStage });
    await runWorkflowOnServer(client, plan, opts);
  }

  @Option({ flags: '--project <id>', description: 'project id (required)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--task <id>', description: 'base task id task-YYYYMMDD-HHMMSS-slug; stage tasks are <id>-s00 … <id>-s12 (required)' })
  parseTask(v: string): string {
    return v;
  }

  @Option({ flags: '--agent <type>', description: 'agent type for every stage (default claude)' })
  parseAgent(v: string): string {
    return v;
  }

  @Option({ flags: '--from-stage <n>', description: 'first stage, 0..12 (default 0)' })
  parseFromStage(v: string): string {
    return v;
  }

  @Option({ flags: '--to-stage <n>', description: 'last stage, 0..12, not below --from-stage (default 12)' })
  parseToStage(v: string): string {
    return v;
  }

  @Option({ flags: '--dry-run', description: 'print the planned stage tasks; send nothing to the server' })
  parseDryRun(): boolean {
    return true;
  }
}

@SubCommand({ name: 'workflow', description: 'Multi-stage workflows as chained tasks on a conductor server (run)', subCommands: [ServerWorkflowRunCommand] })
export class ServerWorkflowCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp();
  }
}

/** Providers of the `server workflow …` commands. */
export const workflowClientCommands = [ServerWorkflowCommand, ServerWorkflowRunCommand];
