import { CommandRunner, Option, SubCommand } from 'nest-commander';
import { parseGoalSpec } from '@app/runner';
import { UsageError } from '../../../common/cli-errors';
import { asCliError } from '../../engine/job-common';
import { intFlag, required, textOrFile } from '../../orchestration/flags';
import { GoalDecomposeCommand } from '../../orchestration/goal.command';
import { ClientCommand, ClientOptions, out } from './client-command';
import { CreateTaskRequest, goalMatchesSpec, goalTaskRequests, goalTextFromSource, workflowStagePlan } from './goal-workflow-plan';
import { parseJson, ServerClient } from './server-client';
import { readUserFile } from '@app/storage';

interface CreatedTask {
  task_id: string;
  run_id?: string;
  status?: string;
  queue_position?: number;
  depends_on: string[];
}

/** POSTs the requests one by one (dependencies first); `onCreated` sees each answer as it comes. */
async function createTasks(client: ServerClient, requests: CreateTaskRequest[], onCreated: (t: CreatedTask) => void): Promise<CreatedTask[]> {
  const created: CreatedTask[] = [];
  for (const body of requests) {
    const res = await client.call('POST', '/api/v1/tasks', { body });
    const answer = parseJson<{ run_id?: string; status?: string; queue_position?: number }>(res.text);
    const task: CreatedTask = { task_id: body.task_id, run_id: answer.run_id, status: answer.status, depends_on: body.depends_on };
    if (answer.queue_position) task.queue_position = answer.queue_position;
    created.push(task);
    onCreated(task);
  }
  return created;
}

const createdLine = (t: CreatedTask): string => `created ${t.task_id} (status ${t.status ?? 'unknown'})\n`;

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
    let requests: CreateTaskRequest[];
    let spec: ReturnType<typeof parseGoalSpec>;
    try {
      const path = required(opts.spec, '--spec');
      let text: string;
      try {
        text = readUserFile(path);
      } catch (err) {
        throw new UsageError(`read --spec: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? `no such file: ${path}` : (err as Error).message}`);
      }
      spec = parseGoalSpec(text, path);
      let goalText: string | undefined;
      if (opts.goal !== undefined || opts.goalFile !== undefined) {
        goalText = textOrFile(opts.goal, opts.goalFile, 'goal').text;
        if (!goalMatchesSpec(spec, goalText)) throw new UsageError('the goal text does not match the spec (digest_sha256 differs)');
      } else {
        goalText = goalTextFromSource(spec);
      }
      const agent = opts.agent?.trim();
      if (opts.agent !== undefined && !agent) throw new UsageError('--agent must not be blank');
      requests = goalTaskRequests(spec, { projectId: opts.project?.trim() || spec.project_id, agent, goalText });
    } catch (err) {
      throw asCliError(err);
    }
    const created = await createTasks(client, requests, (t) => void (opts.json || out(createdLine(t))));
    if (opts.json) out(`${JSON.stringify({ workflow_id: spec.workflow_id, project_id: requests[0].project_id, server: client.base, tasks: created }, null, 2)}\n`);
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
    let plan: ReturnType<typeof workflowStagePlan>;
    try {
      const projectId = required(opts.project, '--project');
      const taskId = required(opts.task, '--task');
      const fromStage = opts.fromStage !== undefined ? intFlag(opts.fromStage, '--from-stage') : undefined;
      const toStage = opts.toStage !== undefined ? intFlag(opts.toStage, '--to-stage') : undefined;
      const agent = opts.agent !== undefined ? required(opts.agent, '--agent') : 'claude';
      plan = workflowStagePlan({ projectId, taskId, agent, fromStage, toStage });
    } catch (err) {
      throw asCliError(err);
    }
    const stageOf = new Map(plan.map((p) => [p.request.task_id, p]));
    const summary = (t: Omit<CreatedTask, 'depends_on'> & { depends_on: string[] }) => ({ stage: stageOf.get(t.task_id)!.stage, name: stageOf.get(t.task_id)!.name, ...t });
    const head = { project_id: plan[0].request.project_id, task_id: opts.task!.trim(), template: 'THE_PROMPT_v5', from_stage: plan[0].stage, to_stage: plan[plan.length - 1].stage };
    if (opts.dryRun) {
      if (opts.json) {
        const stages = plan.map((p) => summary({ task_id: p.request.task_id, depends_on: p.request.depends_on }));
        out(`${JSON.stringify({ ...head, dry_run: true, agent: plan[0].request.agent_type, stages }, null, 2)}\n`);
        return;
      }
      for (const p of plan) {
        const deps = p.request.depends_on.length ? ` (depends on: ${p.request.depends_on.join(', ')})` : '';
        out(`plan stage ${p.stage} ${p.name}: ${p.request.task_id}${deps}\n`);
      }
      out(`dry run: ${plan.length} stage task(s) for agent ${plan[0].request.agent_type}; nothing was sent to the server\n`);
      return;
    }
    const created = await createTasks(
      client,
      plan.map((p) => p.request),
      (t) => void (opts.json || out(createdLine(t))),
    );
    if (opts.json) out(`${JSON.stringify({ ...head, dry_run: false, server: client.base, stages: created.map(summary) }, null, 2)}\n`);
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
