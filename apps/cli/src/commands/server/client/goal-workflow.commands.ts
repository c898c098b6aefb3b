import { CommandRunner, Option, SubCommand } from 'nest-commander';
import { ClientOptions, goalRunRequests, runGoalOnServer, ServerClient } from '@app/client';
import { readGoalSpecFile } from '@app/orchestration';
import { required, textOrFile } from '../../orchestration/flags';
import { GoalDecomposeCommand } from '../../orchestration/goal.command';
import { ClientCommand } from './client-command';
import { workflowClientCommands } from './workflow.commands';

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
    const spec = readGoalSpecFile(required(opts.spec, '--spec'));
    const goalText = opts.goal !== undefined || opts.goalFile !== undefined ? textOrFile(opts.goal, opts.goalFile, 'goal').text : undefined;
    const requests = goalRunRequests(spec, { project: opts.project, agent: opts.agent, goalText });
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

/** Providers of the `server goal …` / `server workflow …` commands. */
export const goalWorkflowClientCommands = [ServerGoalCommand, ServerGoalDecomposeCommand, ServerGoalRunCommand, ...workflowClientCommands];
