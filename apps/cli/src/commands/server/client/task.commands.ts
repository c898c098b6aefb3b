import { CommandRunner, Option, SubCommand } from 'nest-commander';
import { deleteTask, listTasks, LogsOptions, parseIntFlag, ProjectOptions, PullRequestOptions, resumeTask, RunsOptions, ServerClient, stopTask, taskLogs, TaskListOptions, taskPullRequest, taskRuns, taskStatus } from '@app/client';
import { ProjectScopedCommand } from './client-command';

@SubCommand({ name: 'status', arguments: '<task-id>', description: 'Get the status of a task' })
export class ServerTaskStatusCommand extends ProjectScopedCommand {
  execute(args: string[], opts: ProjectOptions, client: ServerClient): Promise<void> {
    return taskStatus(client, args, opts);
  }
}

@SubCommand({ name: 'stop', arguments: '<task-id>', description: 'Stop all running runs of a task' })
export class ServerTaskStopCommand extends ProjectScopedCommand {
  execute(args: string[], opts: ProjectOptions, client: ServerClient): Promise<void> {
    return stopTask(client, args, opts);
  }
}

@SubCommand({ name: 'list', description: 'List tasks in a project' })
export class ServerTaskListCommand extends ProjectScopedCommand<TaskListOptions> {
  execute(args: string[], opts: TaskListOptions, client: ServerClient): Promise<void> {
    return listTasks(client, args, opts);
  }

  @Option({ flags: '--status <status>', description: 'filter by status: running, active, done, failed, blocked' })
  parseStatus(value: string): string {
    return value;
  }

  @Option({ flags: '--limit <n>', description: 'page size (default 50, at most 500)' })
  parseLimit(value: string): number {
    return parseIntFlag(value, 'limit');
  }

  @Option({ flags: '--offset <n>', description: 'skip the first n tasks (default 0)' })
  parseOffset(value: string): number {
    return parseIntFlag(value, 'offset');
  }
}

@SubCommand({ name: 'delete', arguments: '<task-id>', description: 'Delete a task and all its runs' })
export class ServerTaskDeleteCommand extends ProjectScopedCommand {
  execute(args: string[], opts: ProjectOptions, client: ServerClient): Promise<void> {
    return deleteTask(client, args, opts);
  }
}

@SubCommand({ name: 'resume', arguments: '<task-id>', description: 'Resume an exhausted task by removing its DONE file' })
export class ServerTaskResumeCommand extends ProjectScopedCommand {
  execute(args: string[], opts: ProjectOptions, client: ServerClient): Promise<void> {
    return resumeTask(client, args, opts);
  }
}

@SubCommand({ name: 'pull-request', arguments: '<task-id>', description: "Push a worktree task's branch and open or update its GitHub pull request (the server needs a GitHub token; docs/triggers.md)" })
export class ServerTaskPullRequestCommand extends ProjectScopedCommand<PullRequestOptions> {
  execute(args: string[], opts: PullRequestOptions, client: ServerClient): Promise<void> {
    return taskPullRequest(client, args, opts);
  }

  @Option({ flags: '--repository <owner/name>', description: "the GitHub repository (default: read from the remote's URL)" })
  parseRepository(value: string): string {
    return value;
  }

  @Option({ flags: '--remote <name>', description: 'the git remote the branch is pushed to (default origin)' })
  parseRemote(value: string): string {
    return value;
  }

  @Option({ flags: '--base <branch>', description: "the pull request's base branch (default: the branch the worktree started from)" })
  parseBase(value: string): string {
    return value;
  }
}

@SubCommand({ name: 'logs', arguments: '<task-id>', description: 'Stream task output via the server' })
export class ServerTaskLogsCommand extends ProjectScopedCommand<LogsOptions> {
  execute(args: string[], opts: LogsOptions, client: ServerClient): Promise<void> {
    return taskLogs(client, args, opts);
  }

  @Option({ flags: '--run <run-id>', description: 'specific run ID (default: latest)' })
  parseRun(value: string): string {
    return value;
  }

  @Option({ flags: '--follow', description: 'keep streaming; reconnect if connection drops' })
  parseFollow(): boolean {
    return true;
  }

  @Option({ flags: '--tail <n>', description: 'output last N lines only (0 = all)' })
  parseTail(value: string): number {
    return parseIntFlag(value, 'tail');
  }
}

@SubCommand({ name: 'runs', arguments: '<task-id>', description: 'List all runs for a task' })
export class ServerTaskRunsCommand extends ProjectScopedCommand<RunsOptions> {
  execute(args: string[], opts: RunsOptions, client: ServerClient): Promise<void> {
    return taskRuns(client, args, opts);
  }

  @Option({ flags: '--limit <n>', description: 'maximum number of runs to show (default 50)' })
  parseLimit(value: string): number {
    return parseIntFlag(value, 'limit');
  }
}

@SubCommand({
  name: 'task',
  description: 'Manage tasks via the server API',
  subCommands: [ServerTaskStatusCommand, ServerTaskStopCommand, ServerTaskListCommand, ServerTaskDeleteCommand, ServerTaskResumeCommand, ServerTaskPullRequestCommand, ServerTaskLogsCommand, ServerTaskRunsCommand],
})
export class ServerTaskCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp();
  }
}
