import { CommandRunner, Option, SubCommand } from 'nest-commander';
import { ClientCommand, ClientOptions, out, printRaw, ProjectOptions, ProjectScopedCommand, requireFlag } from './client-command';
import { formatBytes, formatLocal, isZeroTime, parseDuration, tabulate } from './format';
import { errorMessageOf, expectStatus, parseJson, query, seg, ServerClient, ServerClientError } from './server-client';
import { oneArg } from './task.commands';
import type { ProjectStats } from '@app/contracts';

@SubCommand({ name: 'list', description: 'List all projects' })
export class ServerProjectListCommand extends ClientCommand {
  async execute(_args: string[], opts: ClientOptions, client: ServerClient): Promise<void> {
    // every page (issue #29); --json prints them as one `{"projects": [...]}`
    const projects = await client.getAllPages<{ id: string; task_count: number; last_activity?: string }>('/api/projects', 'projects');
    if (opts.json) return printRaw(JSON.stringify({ projects }));
    const rows = [['PROJECT', 'TASKS', 'LAST ACTIVITY']];
    for (const p of projects) rows.push([p.id, String(p.task_count), isZeroTime(p.last_activity) ? '-' : formatLocal(p.last_activity!)]);
    out(tabulate(rows));
  }
}


@SubCommand({ name: 'stats', description: 'Show statistics for a project' })
export class ServerProjectStatsCommand extends ProjectScopedCommand {
  async execute(_args: string[], opts: ProjectOptions, client: ServerClient): Promise<void> {
    const project = requireFlag(opts.project, 'project');
    const { data: s, text } = await client.getJson<ProjectStats>(`/api/projects/${seg(project)}/stats`);
    if (opts.json) return printRaw(text);
    out(
      tabulate([
        ['Project:', s.project_id],
        ['Tasks:', String(s.total_tasks)],
        ['Runs (total):', String(s.total_runs)],
        ['  Running:', String(s.running_runs)],
        ['  Completed:', String(s.completed_runs)],
        ['  Failed:', String(s.failed_runs)],
        ['  Crashed:', String(s.crashed_runs)],
        ['Message bus files:', String(s.message_bus_files)],
        ['Message bus size:', formatBytes(s.message_bus_total_bytes)],
      ]),
    );
  }
}

interface GcOptions extends ProjectOptions {
  olderThan?: string;
  dryRun?: boolean;
  keepFailed?: boolean;
}

@SubCommand({ name: 'gc', description: 'Garbage collect old runs of a project' })
export class ServerProjectGcCommand extends ProjectScopedCommand<GcOptions> {
  async execute(_args: string[], opts: GcOptions, client: ServerClient): Promise<void> {
    const project = requireFlag(opts.project, 'project');
    const olderThan = opts.olderThan ?? '168h';
    parseDuration(olderThan, '--older-than');
    const path = `/api/projects/${seg(project)}/gc${query({ older_than: olderThan, dry_run: !!opts.dryRun, keep_failed: !!opts.keepFailed })}`;
    const res = await client.call('POST', path, { expect: [200] });
    if (opts.json) return printRaw(res.text);
    const r = parseJson<{ deleted_runs: number; freed_bytes: number; dry_run: boolean }>(res.text);
    out(r.dry_run ? `DRY RUN: would delete ${r.deleted_runs} runs, free ${formatBytes(r.freed_bytes)}\n` : `Deleted ${r.deleted_runs} runs, freed ${formatBytes(r.freed_bytes)}\n`);
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

interface DeleteOptions extends ClientOptions {
  force?: boolean;
}

@SubCommand({ name: 'delete', arguments: '<project-id>', description: 'Delete an entire project (all tasks and runs)' })
export class ServerProjectDeleteCommand extends ClientCommand<DeleteOptions> {
  async execute(args: string[], opts: DeleteOptions, client: ServerClient): Promise<void> {
    const project = oneArg(args, 'project-id');
    const res = await client.send('DELETE', `/api/projects/${seg(project)}${opts.force ? '?force=true' : ''}`);
    if (res.status === 409) {
      const message = errorMessageOf(res.text);
      throw new ServerClientError(message && message !== res.text.trim() ? message : 'project has running tasks; stop them first or use --force', 409);
    }
    expectStatus(res, [200]);
    if (opts.json) return printRaw(res.text);
    const r = parseJson<{ project_id: string; deleted_tasks: number; freed_bytes: number }>(res.text);
    out(`Project ${r.project_id} deleted (${r.deleted_tasks} tasks, ${formatBytes(r.freed_bytes)} freed).\n`);
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
