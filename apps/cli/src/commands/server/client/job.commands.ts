import { CommandRunner, Option, SubCommand } from 'nest-commander';
import { collect, listJobs, ProjectOptions, ServerClient, submitJob, SubmitOptions } from '@app/client';
import { ProjectScopedCommand } from './client-command';

@SubCommand({ name: 'submit', description: 'Submit a job (a task) to the conductor server' })
export class ServerJobSubmitCommand extends ProjectScopedCommand<SubmitOptions> {
  execute(args: string[], opts: SubmitOptions, client: ServerClient): Promise<void> {
    return submitJob(client, args, opts);
  }

  @Option({ flags: '--task <id>', description: 'task ID (optional; generated if omitted)' })
  parseTask(value: string): string {
    return value;
  }

  @Option({ flags: '--agent <type>', description: 'agent type, e.g. claude (required)' })
  parseAgent(value: string): string {
    return value;
  }

  @Option({ flags: '--prompt <text>', description: 'task prompt (mutually exclusive with --prompt-file)' })
  parsePrompt(value: string): string {
    return value;
  }

  @Option({ flags: '--prompt-file <path>', description: 'path to a file containing the task prompt' })
  parsePromptFile(value: string): string {
    return value;
  }

  @Option({ flags: '--project-root <dir>', description: 'working directory for the task' })
  parseProjectRoot(value: string): string {
    return value;
  }

  @Option({ flags: '--attach-mode <mode>', description: 'attach mode: create, attach, or resume (default create)' })
  parseAttachMode(value: string): string {
    return value;
  }

  @Option({ flags: '--depends-on <task-id>', description: 'task dependencies (repeat or comma-separate)' })
  parseDependsOn(value: string, previous?: string[]): string[] {
    return collect(value, previous);
  }

  @Option({ flags: '--wait', description: 'wait for the run to complete by polling its status' })
  parseWait(): boolean {
    return true;
  }

  @Option({ flags: '--follow', description: 'stream the task output until it completes (implies --wait)' })
  parseFollow(): boolean {
    return true;
  }
}

@SubCommand({ name: 'list', description: 'List tasks on the conductor server' })
export class ServerJobListCommand extends ProjectScopedCommand {
  execute(args: string[], opts: ProjectOptions, client: ServerClient): Promise<void> {
    return listJobs(client, args, opts);
  }
}

@SubCommand({ name: 'job', description: 'Submit and list jobs via the server API', subCommands: [ServerJobSubmitCommand, ServerJobListCommand] })
export class ServerJobCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp();
  }
}
