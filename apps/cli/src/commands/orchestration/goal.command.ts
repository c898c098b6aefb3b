import { resolve } from 'node:path';
import { Command, CommandRunner, Option, SubCommand } from 'nest-commander';
import { buildGoalSpec, encodeGoalSpec, formatCreatedGoalTasks, goalFormatForPath, goalRunJson, goalTextFromSource, materializeGoalSpec, parseGoalSpec, RunnerService, runGoalGraph } from '@app/runner';
import { UsageError } from '../../common/cli-errors';
import { agentCallerEnv, loadRunConfig, optionalDuration, runRoot, withParentOptions } from '../engine/job-common';
import { countFlag } from '../engine/support/options';
import { resolveRoot } from '../engine/support/runs-root';
import { intFlag, textOrFile } from './flags';
import { resolveProject } from './project-scope';
import { readUserFile, writeUserFile } from '@app/storage';

interface DecomposeFlags {
  goal?: string;
  goalFile?: string;
  project?: string;
  root?: string;
  strategy?: string;
  template?: string;
  maxParallel?: string;
  json?: boolean;
  out?: string;
  run?: boolean;
}

interface GoalRunFlags {
  spec?: string;
  goal?: string;
  goalFile?: string;
  root?: string;
  json?: boolean;
  start?: boolean;
  agent?: string;
  config?: string;
  maxRestarts?: string;
  restartDelay?: string;
  timeout?: string;
}

@SubCommand({
  name: 'decompose',
  description:
    'Turn a goal into a deterministic workflow spec (goal-workflow/v1): eight tasks of the RLM strategy with a fixed ' +
    'dependency graph. The same input always gives the same bytes. Prints YAML (or JSON with --json); with --run the ' +
    'tasks are also created (TASK.md + TASK-CONFIG.yaml depends_on) so `run-agent task` or the server can execute them.',
})
export class GoalDecomposeCommand extends CommandRunner {
  async run(_args: string[], options: DecomposeFlags = {}): Promise<void> {
    const flags = withParentOptions(this.command, options);
    const goal = textOrFile(flags.goal, flags.goalFile, 'goal');
    const maxParallel = flags.maxParallel !== undefined ? intFlag(flags.maxParallel, '--max-parallel', Number.MIN_SAFE_INTEGER) : undefined;
    if (maxParallel !== undefined && maxParallel > 16) throw new UsageError(`invalid --max-parallel ${maxParallel}: must be at most 16`);
    const root = resolveRoot(flags.root);
    const projectId = await resolveProject(flags.project, root);
    const spec = buildGoalSpec({
      projectId,
      goal: goal.text,
      mode: goal.file ? 'file' : 'inline',
      source: goal.file,
      rootDir: flags.root,
      strategy: flags.strategy,
      template: flags.template,
      maxParallel,
    });
    if (flags.out) {
      const out = resolve(flags.out);
      writeUserFile(out, encodeGoalSpec(spec, goalFormatForPath(out)), { mkdirs: true });
    }
    if (flags.run) {
      process.stdout.write(formatCreatedGoalTasks(root, spec, materializeGoalSpec(root, spec, goal.text), flags.json === true));
      return;
    }
    process.stdout.write(encodeGoalSpec(spec, flags.json ? 'json' : 'yaml'));
  }

  @Option({ flags: '--goal <text>', description: 'the goal text (exactly one of --goal and --goal-file)' })
  parseGoal(v: string): string {
    return v;
  }

  @Option({ flags: '--goal-file <file>', description: 'read the goal from this file (must not be empty)' })
  parseGoalFile(v: string): string {
    return v;
  }

  @Option({ flags: '--project <id>', description: 'project id (default: $JRUN_PROJECT_ID, the working directory, its home-folders.md link, or interactive init on a terminal)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--root <dir>', description: 'runs root: recorded as root_dir in the spec; with --run the tasks are created there (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--strategy <name>', description: 'decomposition strategy; only "rlm" (default rlm)' })
  parseStrategy(v: string): string {
    return v;
  }

  @Option({ flags: '--template <name>', description: 'prompt template named in the spec (default THE_PROMPT_v5)' })
  parseTemplate(v: string): string {
    return v;
  }

  @Option({ flags: '--max-parallel <n>', description: 'parallel fan-out limit recorded in the spec; 0 or less means 6, at most 16 (default 6)' })
  parseMaxParallel(v: string): string {
    return v;
  }

  @Option({ flags: '--json', description: 'print JSON instead of YAML (with --run: the created tasks as JSON)' })
  parseJson(): boolean {
    return true;
  }

  @Option({ flags: '--out <file>', description: 'also write the spec to this file (.json → JSON, else YAML; parent folders are created)' })
  parseOut(v: string): string {
    return v;
  }

  @Option({ flags: '--run', description: 'create the tasks of the spec in the runs root (TASK.md, TASK-CONFIG.yaml depends_on) instead of printing it' })
  parseRun(): boolean {
    return true;
  }
}

@SubCommand({
  name: 'run',
  description:
    'Create the tasks of a goal spec (from `goal decompose --out`) in the runs root: TASK.md with the step prompt and ' +
    'TASK-CONFIG.yaml depends_on, so `run-agent task` or the server runs them in dependency order (existing TASK.md files ' +
    'are kept). With --start it runs the graph itself: each task\'s Ralph loop starts when its dependencies are DONE.',
})
export class GoalRunCommand extends CommandRunner {
  constructor(private readonly runner: RunnerService) {
    super();
  }

  async run(_args: string[], options: GoalRunFlags = {}): Promise<void> {
    const flags = withParentOptions(this.command, options);
    if (!flags.spec?.trim()) throw new UsageError('--spec is required');
    let text: string;
    try {
      text = readUserFile(flags.spec);
    } catch (err) {
      throw new UsageError(`read --spec: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? `no such file: ${flags.spec}` : (err as Error).message}`);
    }
    const spec = parseGoalSpec(text, flags.spec);
    const goal = flags.goal !== undefined || flags.goalFile !== undefined ? textOrFile(flags.goal, flags.goalFile, 'goal').text : goalTextFromSource(spec);
    const maxRestarts = flags.maxRestarts !== undefined ? countFlag(flags.maxRestarts, '--max-restarts') : undefined;
    const restartDelayMs = optionalDuration(flags.restartDelay, '--restart-delay');
    const idleTimeoutMs = optionalDuration(flags.timeout, '--timeout');
    const loaded = flags.start ? loadRunConfig(flags.config) : {};
    const root = flags.start ? runRoot(flags.root ?? spec.root_dir, loaded) : resolveRoot(flags.root ?? spec.root_dir);
    const tasks = materializeGoalSpec(root, spec, goal);
    if (!flags.start) {
      process.stdout.write(formatCreatedGoalTasks(root, spec, tasks, flags.json === true));
      return;
    }
    const result = await runGoalGraph({
      root,
      spec,
      runTask: (opts) => this.runner.runTask(opts),
      agent: flags.agent,
      config: loaded.config,
      env: agentCallerEnv(loaded),
      maxRestarts,
      restartDelayMs,
      idleTimeoutMs,
      log: flags.json ? undefined : (line) => void process.stdout.write(`${line}\n`),
    });
    if (flags.json) process.stdout.write(goalRunJson(root, spec, result));
    if (!result.ok) throw new Error(`workflow ${spec.workflow_id}: not every task finished (see the task outcomes)`);
  }

  @Option({ flags: '--spec <file>', description: 'workflow spec written by `goal decompose --out` (YAML or JSON; required)' })
  parseSpec(v: string): string {
    return v;
  }

  @Option({ flags: '--goal <text>', description: 'full goal text for the task prompts (checked against the spec digest; default: the spec goal source file, else its preview)' })
  parseGoal(v: string): string {
    return v;
  }

  @Option({ flags: '--goal-file <file>', description: 'read the full goal text from this file (checked against the spec digest)' })
  parseGoalFile(v: string): string {
    return v;
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: root_dir of the spec, $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--json', description: 'print the created tasks (with --start: the task outcomes) as JSON' })
  parseJson(): boolean {
    return true;
  }

  @Option({ flags: '--start', description: 'also run the tasks: each Ralph loop starts once its dependencies are DONE, at most max_parallel at a time; exit 1 unless all end DONE' })
  parseStart(): boolean {
    return true;
  }

  @Option({ flags: '--agent <name>', description: 'with --start: agent for every task instead of the agent named per task in the spec' })
  parseAgent(v: string): string {
    return v;
  }

  @Option({ flags: '--config <file>', description: 'with --start: config file (default: $CONDUCTOR_CONFIG, ./config.yaml, ./config.yml, ~/.run-agent/conductor-loop.hcl)' })
  parseConfig(v: string): string {
    return v;
  }

  @Option({ flags: '--max-restarts <n>', description: 'with --start: restarts per task after the first attempt (default 100)' })
  parseMaxRestarts(v: string): string {
    return v;
  }

  @Option({ flags: '--restart-delay <duration>', description: 'with --start: pause between attempts of a task (default 1s)' })
  parseRestartDelay(v: string): string {
    return v;
  }

  @Option({ flags: '--timeout <duration>', description: 'with --start: per attempt, kill the agent after this long without output (default: none)' })
  parseTimeout(v: string): string {
    return v;
  }
}

@Command({
  name: 'goal',
  description: 'Goal decomposition into a runnable task graph (decompose, run)',
  subCommands: [GoalDecomposeCommand, GoalRunCommand],
})
export class GoalCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp();
  }
}
