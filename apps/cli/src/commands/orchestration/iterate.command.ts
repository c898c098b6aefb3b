import { Inject } from '@nestjs/common';
import { Command, CommandRunner, Option } from 'nest-commander';
import { RunnerService } from '@app/runner';
import { iterateResultJson, runIterate } from '@app/orchestration';
import { STORAGE_INDEX_FACTORY, type StorageIndexFactory, validateProjectId } from '@app/storage';
import { EXIT_FAILURE } from '../../common/cli-errors';
import { agentCallerEnv, checkDir, loadRunConfig, optionalDuration, runRoot } from '../engine/job-common';
import { intFlag, required, textOrFile } from './flags';

interface IterateFlags {
  root?: string;
  config?: string;
  project?: string;
  task?: string;
  agent?: string;
  cwd?: string;
  prompt?: string;
  promptFile?: string;
  reviewPrompt?: string;
  reviewPromptFile?: string;
  maxIterations?: string;
  timeout?: string;
  json?: boolean;
}

@Command({
  name: 'iterate',
  description:
    'Implement → review loop: each iteration runs an implementation job (sub-task <task>-impl-iter<i>-<HHMMSS>) and a review ' +
    'job (<task>-review-iter<i>-<HHMMSS>) that sees the implementation output; the next implementation sees the review. ' +
    'A review saying APPROVED or PASS ends the loop (exit 0); REJECTED, FAIL or CHANGES_REQUESTED continue. After ' +
    '--max-iterations without approval it exits 1. Writes <task>/ITERATE-SUMMARY.md.',
})
export class IterateCommand extends CommandRunner {
  constructor(
    private readonly runner: RunnerService,
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
  ) {
    super();
  }

  async run(_args: string[], flags: IterateFlags = {}): Promise<void> {
    const projectId = validateProjectId(required(flags.project, '--project'));
    const taskId = required(flags.task, '--task');
    const prompt = textOrFile(flags.prompt, flags.promptFile, 'prompt').text.trim();
    const reviewPrompt = textOrFile(flags.reviewPrompt, flags.reviewPromptFile, 'review-prompt').text.trim();
    const maxIterations = flags.maxIterations !== undefined ? intFlag(flags.maxIterations, '--max-iterations', 1) : undefined;
    const idleTimeoutMs = optionalDuration(flags.timeout, '--timeout');
    const cwd = checkDir(flags.cwd, 'working directory');
    const loaded = loadRunConfig(flags.config);
    const root = runRoot(flags.root, loaded);
    const log = (line: string): void => {
      if (!flags.json) process.stdout.write(`[iterate] ${line}\n`);
    };
    const result = await runIterate({
      layout: this.indexFor(root).layout,
      projectId,
      taskId,
      prompt,
      reviewPrompt,
      maxIterations,
      agent: flags.agent,
      config: loaded.config,
      cwd,
      env: agentCallerEnv(loaded),
      idleTimeoutMs,
      runJob: (opts) => this.runner.runJob(opts),
      log,
    });
    if (flags.json) {
      process.stdout.write(iterateResultJson(result));
    } else {
      log(`summary: ${result.summaryPath}`);
    }
    if (result.outcome !== 'passed') process.exitCode = EXIT_FAILURE;
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: the root of $JRUN_TASK_FOLDER, $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--project <id>', description: 'project id (required)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--task <id>', description: 'task id task-YYYYMMDD-HHMMSS-slug (required); the summary goes into this task' })
  parseTask(v: string): string {
    return v;
  }

  @Option({ flags: '--config <file>', description: 'config file (default: $CONDUCTOR_CONFIG, ./config.yaml, ./config.yml, ~/.run-agent/conductor-loop.hcl)' })
  parseConfig(v: string): string {
    return v;
  }

  @Option({ flags: '--agent <name>', description: 'config agent name or agent type for both jobs (default: defaults.agent, first configured agent)' })
  parseAgent(v: string): string {
    return v;
  }

  @Option({ flags: '--prompt <text>', description: 'implementation prompt (exactly one of --prompt and --prompt-file)' })
  parsePrompt(v: string): string {
    return v;
  }

  @Option({ flags: '--prompt-file <file>', description: 'read the implementation prompt from this file' })
  parsePromptFile(v: string): string {
    return v;
  }

  @Option({ flags: '--review-prompt <text>', description: 'review prompt (exactly one of --review-prompt and --review-prompt-file)' })
  parseReviewPrompt(v: string): string {
    return v;
  }

  @Option({ flags: '--review-prompt-file <file>', description: 'read the review prompt from this file' })
  parseReviewPromptFile(v: string): string {
    return v;
  }

  @Option({ flags: '--max-iterations <n>', description: 'implementation/review rounds before giving up, at least 1 (default 3)' })
  parseMaxIterations(v: string): string {
    return v;
  }

  @Option({ flags: '--cwd <dir>', description: 'working directory of the agents (default: each sub-task folder)' })
  parseCwd(v: string): string {
    return v;
  }

  @Option({ flags: '--timeout <duration>', description: 'per job: kill the agent after this long without output (Go duration; default: none)' })
  parseTimeout(v: string): string {
    return v;
  }

  @Option({ flags: '--json', description: 'print the result as JSON instead of [iterate] lines (exit code unchanged)' })
  parseJson(): boolean {
    return true;
  }
}
