import { CommandRunner, Option, SubCommand } from 'nest-commander';
import { ClientOptions, goalMatchesSpec, goalTaskRequests, goalTextFromSource, runGoalOnServer, runWorkflowOnServer, ServerClient, workflowStagePlan } from '@app/client';
import { parseGoalSpec } from '@app/runner';
import { readUserFile } from '@app/storage';
import { UsageError } from '../../../common/cli-errors';
import { intFlag, required, textOrFile } from '../../orchestration/flags';
import { GoalDecomposeCommand } from '../../orchestration/goal.command';
import { ClientCommand } from './client-command';

@SubCommand({
  name: 'decompose',
  description:
    'Same as `run-agent goal decompose`: pure computation, done locally without contacting the server (no --server ' +
    'needed). Prints the goal-workflow/v1 spec; create its tasks on the server with `conductor goal run --spec <file>`.',
})
export class ServerGoalDecomposeCommand extends GoalDecomposeCommand {}

interface GoalRunOptions extends ClientOptions {
  spec?: string;
  project?: string;
  agent?: string;
  goal?: string;
  goalFile?: string;
}

@SubCommand({
  name: 'run',
  description:
    'Create the tasks of a goal spec (from `goal decompose --out`) on a conductor server: one POST /api/v1/tasks per ' +
    'task, dependencies first, with the TASK.md prompt `run-agent goal run` writes and depends_on from the spec; the ' +
    'server starts (or queues) each one and gates it on its dependencies. Prints "created <task> (status …)" per task.',
})
export class ServerGoalRunCommand extends ClientCommand<GoalRunOptions> {
  async execute(_args: string[], opts: GoalRunOptions, client: ServerClient): Promise<void> {
    const path = required(opts.spec, '--spec');
    let text: string;
    try {
      text = readUserFile(path);
    } catch (err) {
      throw new UsageError(`read --spec: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? `no such file: ${path}` : (err as Error).message}`);
    }
    const spec = parseGoalSpec(text, path);
    let goalText: string | undefined;
    if (opts.goal !== undefined || opts.goalFile !== undefined) {
      goalText = textOrFile(opts.goal, opts.goalFile, 'goal').text;
      if (!goalMatchesSpec(spec, goalText)) throw new UsageError('the goal text does not match the spec (digest_sha256 differs)');
    } else {
      goalText = goalTextFromSource(spec);
    }
    const agent = opts.agent?.trim();
    if (opts.agent !== undefined && !agent) throw new UsageError('--agent must not be blank');
    const requests = goalTaskRequests(spec, { projectId: opts.project?.trim() || spec.project_id, agent, goalText });
    await runGoalOnServer(client, spec, requests, opts);
  }

  @Option({ flags: '--spec <file>', description: 'workflow spec written by `goal decompose --out` (YAML or JSON; required)' })
  parseSpec(v: string): string {
    return v;
  }

  @Option({ flags: '--project <id>', description: 'project to create the tasks in (default: project_id of the spec)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--agent <type>', description: 'agent type for every task (default: the agent named per task in the spec)' })
  parseAgent(v: string): string {
    return v;
  }

  @Option({ flags: '--goal <text>', description: 'full goal text for the prompts (checked against the spec digest; default: the spec goal source file, else its preview)' })
  parseGoal(v: string): string {
    return v;
  }

  @Option({ flags: '--goal-file <file>', description: 'read the full goal text from this file (checked against the spec digest)' })
  parseGoalFile(v: string): string {
    return v;
  }
}

@SubCommand({
  name: 'goal',
  description: 'Goal decomposition into a task graph on a conductor server (decompose: local; run: creates the tasks)',
  subCommands: [ServerGoalDecomposeCommand, ServerGoalRunCommand],
})
export class ServerGoalCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp();
  }
}

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

/** Providers of the `server goal …` / `server workflow …` commands. */
export const goalWorkflowClientCommands = [ServerGoalCommand, ServerGoalDecomposeCommand, ServerGoalRunCommand, ServerWorkflowCommand, ServerWorkflowRunCommand];
