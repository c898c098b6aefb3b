import type { ProjectStats } from '@app/contracts';
import { formatBytes, formatLocal, isZeroTime, parseDuration, tabulate } from './format';
import { ClientOptions, oneArg, out, printRaw, ProjectOptions, requireFlag } from './output';
import { errorMessageOf, expectStatus, parseJson, query, seg, ServerClient, ServerClientError } from './server-client';

export async function listProjects(client: ServerClient, _args: string[], opts: ClientOptions): Promise<void> {
  // every page (issue #29); --json prints them as one `{"projects": [...]}`
  const projects = await client.getAllPages<{ id: string; task_count: number; last_activity?: string }>('/api/projects', 'projects');
  if (opts.json) return printRaw(JSON.stringify({ projects }));
  const rows = [['PROJECT', 'TASKS', 'LAST ACTIVITY']];
  for (const p of projects) rows.push([p.id, String(p.task_count), isZeroTime(p.last_activity) ? '-' : formatLocal(p.last_activity!)]);
  out(tabulate(rows));
}

export async function projectStats(client: ServerClient, _args: string[], opts: ProjectOptions): Promise<void> {
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

export interface GcOptions extends ProjectOptions {
  olderThan?: string;
  dryRun?: boolean;
  keepFailed?: boolean;
}

export async function projectGc(client: ServerClient, _args: string[], opts: GcOptions): Promise<void> {
  const project = requireFlag(opts.project, 'project');
  const olderThan = opts.olderThan ?? '168h';
  parseDuration(olderThan, '--older-than');
  const path = `/api/projects/${seg(project)}/gc${query({ older_than: olderThan, dry_run: !!opts.dryRun, keep_failed: !!opts.keepFailed })}`;
  const res = await client.call('POST', path, { expect: [200] });
  if (opts.json) return printRaw(res.text);
  const r = parseJson<{ deleted_runs: number; freed_bytes: number; dry_run: boolean }>(res.text);
  out(r.dry_run ? `DRY RUN: would delete ${r.deleted_runs} runs, free ${formatBytes(r.freed_bytes)}\n` : `Deleted ${r.deleted_runs} runs, freed ${formatBytes(r.freed_bytes)}\n`);
}

export interface DeleteOptions extends ClientOptions {
  force?: boolean;
}

export async function deleteProject(client: ServerClient, args: string[], opts: DeleteOptions): Promise<void> {
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
