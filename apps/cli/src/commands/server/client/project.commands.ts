import { CommandRunner, Option, SubCommand } from 'nest-commander';
import { ClientOptions, deleteProject, DeleteOptions, GcOptions, listProjects, ProjectOptions, projectGc, projectStats, ServerClient } from '@app/client';
import { ClientCommand, ProjectScopedCommand } from './client-command';

@SubCommand({ name: 'list', description: 'List all projects' })
export class ServerProjectListCommand extends ClientCommand {
  execute(args: string[], opts: ClientOptions, client: ServerClient): Promise<void> {
    return listProjects(client, args, opts);
  }
}

@SubCommand({ name: 'stats', description: 'Show statistics for a project' })
export class ServerProjectStatsCommand extends ProjectScopedCommand {
  execute(args: string[], opts: ProjectOptions, client: ServerClient): Promise<void> {
    return projectStats(client, args, opts);
  }
}

@SubCommand({ name: 'gc', description: 'Garbage collect old runs of a project' })
export class ServerProjectGcCommand extends ProjectScopedCommand<GcOptions> {
  execute(args: string[], opts: GcOptions, client: ServerClient): Promise<void> {
    return projectGc(client, args, opts);
  }

  @Option({ flags: '--older-than <duration>', description: 'delete runs older than this duration (default 168h)' })
  parseOlderThan(value: string): string {
    return value;
  }

  @Option({ flags: '--dry-run', description: 'show what would be deleted without deleting' })
  parseDryRun(): boolean {
    return true;
  }

  @Option({ flags: '--keep-failed', description: 'keep failed runs (exit code != 0)' })
  parseKeepFailed(): boolean {
    return true;
  }
}

@SubCommand({ name: 'delete', arguments: '<project-id>', description: 'Delete an entire project (all tasks and runs)' })
export class ServerProjectDeleteCommand extends ClientCommand<DeleteOptions> {
  execute(args: string[], opts: DeleteOptions, client: ServerClient): Promise<void> {
    return deleteProject(client, args, opts);
  }

  @Option({ flags: '--force', description: 'stop running tasks and delete anyway' })
  parseForce(): boolean {
    return true;
  }
}

@SubCommand({
  name: 'project',
  description: 'Manage projects via the server API',
  subCommands: [ServerProjectListCommand, ServerProjectStatsCommand, ServerProjectGcCommand, ServerProjectDeleteCommand],
})
export class ServerProjectCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp();
  }
}
