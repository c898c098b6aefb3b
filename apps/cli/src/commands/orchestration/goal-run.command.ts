import { Inject } from '@nestjs/common';
import { CommandRunner, Option, SubCommand } from 'nest-commander';
import { RunnerService } from '@app/runner';
import { formatCreatedGoalTasks, goalRunJson, goalTextFromSource, materializeGoalSpec, readGoalSpecFile, runGoalGraph } from '@app/orchestration';
import { STORAGE_INDEX_FACTORY, type StorageIndexFactory } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { agentCallerEnv, loadRunConfig, optionalDuration, runRoot, withParentOptions } from '../engine/job-common';
import { countFlag } from '../engine/support/options';
import { resolveRoot } from '../engine/support/runs-root';
import { textOrFile } from './flags';

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
  name: 'run',
  description:
    'Create the tasks of a goal spec (from `goal decompose --out`) in the runs root: TASK.md with the step prompt and ' +
    'TASK-CONFIG.yaml depends_on, so `run-agent task` or the server runs them in dependency order (existing TASK.md files ' +
    'are kept). With --start it runs the graph itself: each task\'s Ralph loop starts when its dependencies are DONE.',
})
export class GoalRunCommand extends CommandRunner {
  constructor(
    private readonly runner: RunnerService,
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
  ) {
    super();
  }

  async run(_args: string[], options: GoalRunFlags = {}): Promise<void> {
    const flags = withParentOptions(this.command, options);
    if (!flags.spec?.trim()) throw new UsageError('--spec is required');
    const spec = readGoalSpecFile(flags.spec);
    const goal = flags.goal !== undefined || flags.goalFile !== undefined ? textOrFile(flags.goal, flags.goalFile, 'goal').text : goalTextFromSource(spec);
    const maxRestarts = flags.maxRestarts !== undefined ? countFlag(flags.maxRestarts, '--max-restarts') : undefined;
    const restartDelayMs = optionalDuration(flags.restartDelay, '--restart-delay');
    const idleTimeoutMs = optionalDuration(flags.timeout, '--timeout');
    const loaded = flags.start ? loadRunConfig(flags.config) : {};
    const root = flags.start ? runRoot(flags.root ?? spec.root_dir, loaded) : resolveRoot(flags.root ?? spec.root_dir);
    const layout = this.indexFor(root).layout;
    const tasks = materializeGoalSpec(layout, spec, goal);
    if (!flags.start) {
      process.stdout.write(formatCreatedGoalTasks(root, spec, tasks, flags.json === true));
      return;
    }
    const result = await runGoalGraph({
      layout,
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
