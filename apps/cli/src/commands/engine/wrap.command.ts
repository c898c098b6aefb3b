import { resolve } from 'node:path';
import { Inject } from '@nestjs/common';
import { Command, CommandRunner, Option } from 'nest-commander';
import { MessageBusService } from '@app/messagebus';
import { checkWorkingDir, renderCommandLine, runWrapped, WRAP_STDIO_NOTICE, wrapProject } from '@app/runner';
import { generateTaskId, STORAGE_INDEX_FACTORY, type StorageIndexFactory, validateProjectId, validateRunId, validateTaskId } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { durationFlag } from './support/options';
import { resolveRoot } from './support/runs-root';

export { renderCommandLine, WRAP_STDIO_NOTICE, wrapProject };

interface WrapOptions {
  agent?: string;
  root?: string;
  project?: string;
  task?: string;
  cwd?: string;
  parentRunId?: string;
  previousRunId?: string;
  timeout?: string;
  taskPrompt?: string;
}

@Command({
  name: 'wrap',
  arguments: '[command-args...]',
  description:
    'Run an agent CLI with the terminal attached, recorded as a run (run folder, run-info.yaml, RUN_START/RUN_STOP); ' +
    'exits with the wrapped command\'s exit code. Usage: wrap --agent <cli> -- [args...]',
})
export class WrapCommand extends CommandRunner {
  constructor(
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
    private readonly bus: MessageBusService,
  ) {
    super();
  }

  async run(args: string[], options: WrapOptions = {}): Promise<void> {
    const agent = options.agent?.trim();
    if (!agent) throw new UsageError('agent is required');
    const timeoutMs = options.timeout !== undefined ? durationFlag(options.timeout, '--timeout') : 0;
    const env = process.env;
    const cwd = resolve(options.cwd?.trim() || process.cwd());
    checkWorkingDir(cwd);
    const project = wrapProject(options.project, env, process.cwd());
    if (!project) throw new UsageError('cannot infer project: pass --project or run from inside a task or project directory');
    validateProjectId(project);
    let task = options.task?.trim();
    if (task) validateTaskId(task);
    else {
      task = generateTaskId();
      process.stderr.write(`task: ${task}\n`);
    }
    const parentRunId = options.parentRunId?.trim() || env.JRUN_ID?.trim() || '';
    if (parentRunId) validateRunId(parentRunId);
    if (options.previousRunId?.trim()) validateRunId(options.previousRunId.trim());
    const result = await runWrapped({
      layout: this.indexFor(resolveRoot(options.root)).layout,
      writers: this.bus.writers,
      project,
      task,
      agent,
      args,
      cwd,
      env,
      parentRunId,
      previousRunId: options.previousRunId?.trim() || undefined,
      timeoutMs,
      taskPrompt: options.taskPrompt,
    });
    if (result.startError !== undefined) {
      process.stderr.write(`Error: start wrapped command: ${result.startError}\n`);
      process.exitCode = result.exitCode;
    } else if (result.exitCode !== 0) {
      process.stderr.write(`Error: wrapped command exited with code ${result.exitCode}${result.timedOut ? ' (timed out)' : ''}\n`);
      process.exitCode = result.exitCode > 0 && result.exitCode < 256 ? result.exitCode : 1;
    }
  }

  @Option({ flags: '--agent <cli>', description: 'executable to run (e.g. claude, codex, gemini); required' })
  parseAgent(v: string): string {
    return v;
  }

  @Option({ flags: '--project <id>', description: 'project id (default: from JRUN_RUN_FOLDER, JRUN_TASK_FOLDER, JRUN_PROJECT_ID or the working directory)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--task <id>', description: 'task id (default: a new generated id, printed on stderr)' })
  parseTask(v: string): string {
    return v;
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--cwd <dir>', description: 'working directory of the command (default: the current directory)' })
  parseCwd(v: string): string {
    return v;
  }

  @Option({ flags: '--parent-run-id <id>', description: 'parent run id (default: $JRUN_ID)' })
  parseParentRunId(v: string): string {
    return v;
  }

  @Option({ flags: '--previous-run-id <id>', description: 'previous run id to record' })
  parsePreviousRunId(v: string): string {
    return v;
  }

  @Option({ flags: '--timeout <duration>', description: 'kill the command after this long (Go duration; 0 = no limit)' })
  parseTimeout(v: string): string {
    return v;
  }

  @Option({ flags: '--task-prompt <text>', description: 'TASK.md content when the task folder is new (default: a note naming the command)' })
  parseTaskPrompt(v: string): string {
    return v;
  }
}
