import { Inject } from '@nestjs/common';
import { resolve } from 'node:path';
import { Command, CommandRunner, Option, SubCommand } from 'nest-commander';
import { buildGoalSpec, encodeGoalSpec, formatCreatedGoalTasks, goalFormatForPath, materializeGoalSpec } from '@app/orchestration';
import { STORAGE_INDEX_FACTORY, type StorageIndexFactory, writeUserFile } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { withParentOptions } from '../engine/job-common';
import { resolveRoot } from '../engine/support/runs-root';
import { intFlag, textOrFile } from './flags';
import { GoalRunCommand } from './goal-run.command';
import { resolveProject } from './project-scope';

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


@SubCommand({
  name: 'decompose',
  description:
    'Turn a goal into a deterministic workflow spec (goal-workflow/v1): eight tasks of the RLM strategy with a fixed ' +
    'dependency graph. The same input always gives the same bytes. Prints YAML (or JSON with --json); with --run the ' +
    'tasks are also created (TASK.md + TASK-CONFIG.yaml depends_on) so `run-agent task` or the server can execute them.',
})
export class GoalDecomposeCommand extends CommandRunner {
  constructor(@Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory) {
    super();
  }

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
      process.stdout.write(formatCreatedGoalTasks(root, spec, materializeGoalSpec(this.indexFor(root).layout, spec, goal.text), flags.json === true));
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
