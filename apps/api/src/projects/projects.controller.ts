import { Body, Controller, Delete, Get, Header, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkProjectRoot, createProjectFolder, flatRunKey, flatRunsBody, homeDirsOf, projectStats, RunnerService, selectFlatRuns } from '@app/runner';
import { stopRunRouted } from '../tasks/scaleout-hooks';
import { badRequest, conflict, notFound } from '../common/api-error';
import { isTruthyFlag, parseGoDurationOrUndefined } from '../common/go-format';
import { checkId, checkOptionalId, isId, isRunId } from '../common/ids';
import { AuditLogService } from '../security/audit-log.service';
import { refuseBrowser } from '../security/browser-origin';
import { CreateProjectDto } from './dto/create-project.dto';
import { isDir, ProjectDataService } from './project-data.service';
import { byCodeUnits, cursorPage, isTimeKey, pageQuery, timeKey } from './pagination';
import { deleteProjectFolder, gcProjectRuns } from './project-files';

function publicProject(p: NonNullable<ReturnType<ProjectDataService['project']>>) {
  const { _last: _ignored, ...rest } = p;
  return rest;
}

@Controller('api/projects')
export class ProjectsController {
  constructor(
    private readonly data: ProjectDataService,
    private readonly audit: AuditLogService,
    private readonly runner: RunnerService,
  ) {}

  /** #21: newest activity first (ties by id), one page (issue #29): next_cursor → after= */
  @Get()
  list(@Query('limit') limit?: string, @Query('after') after?: string) {
    const q = pageQuery(limit, after, (c) => isTimeKey(c, isId));
    const keyed = this.data
      .allProjectIds()
      .map((p) => this.data.project(p))
      .filter((p): p is NonNullable<typeof p> => !!p)
      .map((p) => ({ p, key: timeKey(p._last, p.id, true) }))
      .sort((a, b) => byCodeUnits(a.key, b.key));
    const { page, ...more } = cursorPage(keyed, (k) => k.key, q);
    return { projects: page.map((k) => publicProject(k.p)), ...more };
  }

  /** #22 */
  @Post()
  create(@Body() body: CreateProjectDto, @Req() req: FastifyRequest) {
    const projectId = checkId(body.project_id, 'project_id');
    let root = body.project_root.trim();
    if (root === '') throw badRequest('project_root is required');
    if (root === '~' || root.startsWith('~/')) root = path.join(os.homedir(), root.slice(1));
    if (!path.isAbsolute(root)) throw badRequest('project_root must be an absolute path or use ~/...');
    root = path.resolve(root);
    if (this.data.layout.contains(root)) throw badRequest('project_root must be outside the storage root');
    const rootState = checkProjectRoot(root);
    if (rootState === 'missing') throw badRequest(`project_root does not exist: ${root}`);
    if (rootState === 'not-dir') throw badRequest(`project_root is not a directory: ${root}`);
    const dir = this.data.projectDir(projectId);
    if (isDir(dir) || this.data.allRuns().some((r) => r.info.project_id === projectId)) {
      throw conflict('project already exists', { project_id: projectId });
    }
    createProjectFolder(dir, root);
    this.audit.record(req, { endpoint: 'POST /api/projects', project_id: projectId, payload: { project_id: projectId, project_root: body.project_root } });
    return publicProject(this.data.project(projectId)!);
  }

  /** #23 */
  @Get('home-dirs')
  homeDirs() {
    const roots = (function* (data: ProjectDataService) { for (const p of data.projectIds()) yield data.marker(p)?.root; })(this.data);
    return { dirs: homeDirsOf(this.data.allRuns().map((r) => r.info.cwd), roots, (d) => this.data.layout.contains(d)) };
  }

  /** #24 */
  @Get(':p')
  get(@Param('p') p: string) {
    const id = checkId(p, 'project_id');
    const project = this.data.project(id);
    if (!project) throw notFound('project not found');
    return publicProject(project);
  }

  /** #25 (browser-blocked) */
  @Delete(':p')
  async remove(@Param('p') p: string, @Query('force') force: string | undefined, @Req() req: FastifyRequest) {
    const id = checkId(p, 'project_id');
    refuseBrowser(req, 'project deletion');
    const dir = this.data.projectDir(id);
    if (!isDir(dir)) throw notFound('project not found');
    const running = this.data.runs(id).filter((r) => r.info.status === 'running');
    if (running.length > 0) {
      if (force !== 'true') throw conflict('project has running tasks; stop them first or use --force');
      await Promise.all(running.filter((r) => r.info.process_ownership !== 'external').map((r) => stopRunRouted(this.data.scaleout, this.runner, r, { graceMs: this.data.stopGraceMs, stoppedBy: 'api project deletion' }).catch(() => undefined)));
    }
    const { deletedTasks, freed } = deleteProjectFolder(this.data, dir);
    this.audit.record(req, { endpoint: 'DELETE /api/projects/{project_id}', project_id: id, payload: { force: force === 'true', deleted_tasks: deletedTasks, freed_bytes: freed } });
    return { project_id: id, deleted_tasks: deletedTasks, freed_bytes: freed };
  }

  /** #26 */
  @Get(':p/stats')
  stats(@Param('p') p: string) {
    const id = checkId(p, 'project_id');
    const dir = this.data.projectDir(id);
    if (!isDir(dir)) throw notFound('project not found');
    return projectStats(id, dir, this.data.runs(id));
  }

  /** #27 */
  @Get(':p/runs/flat')
  @Header('Content-Type', 'application/json; charset=utf-8')
  flat(
    @Param('p') p: string,
    @Query('active_only') activeOnly?: string,
    @Query('selected_task_id') selected?: string,
    @Query('selected_task_limit') limitText?: string,
    @Query('limit') pageLimit?: string,
    @Query('after') after?: string,
  ) {
    const id = checkId(p, 'project_id');
    const q = pageQuery(pageLimit, after, (c) => isTimeKey(c, isRunId));
    const selectedTask = checkOptionalId(selected, 'selected_task_id');
    let limit = 0;
    if (limitText !== undefined && limitText !== '') {
      if (!/^\d+$/.test(limitText.trim())) throw badRequest('invalid selected_task_limit', { selected_task_limit: 'must be a non-negative integer' });
      limit = Math.min(200, Number(limitText.trim()));
    }
    const runs = this.data.runs(id);
    const selection = selectFlatRuns(runs, { activeOnly: isTruthyFlag(activeOnly), selectedTask, limit });
    // one page in start order (issue #29), keyed by start time then run id: next_cursor → after=
    return flatRunsBody(id, cursorPage(selection, flatRunKey, q));
  }

  /** #28 (browser-blocked) */
  @Post(':p/gc')
  @HttpCode(200)
  gc(@Param('p') p: string, @Query('older_than') olderThan: string | undefined, @Query('dry_run') dryRun: string | undefined, @Query('keep_failed') keepFailed: string | undefined, @Req() req: FastifyRequest) {
    refuseBrowser(req, 'project garbage collection');
    const id = checkId(p, 'project_id');
    const text = olderThan ?? '168h';
    const ms = parseGoDurationOrUndefined(text);
    if (ms === undefined) throw badRequest(`invalid older_than: time: invalid duration "${text}"`);
    if (!isDir(this.data.projectDir(id))) throw notFound('project not found');
    const isDry = dryRun === 'true';
    const keep = keepFailed === 'true';
    const { deleted, freed } = gcProjectRuns(this.data, id, { cutoffMs: Date.now() - ms, dryRun: isDry, keepFailed: keep });
    this.audit.record(req, { endpoint: 'POST /api/projects/{project_id}/gc', project_id: id, payload: { older_than: text, dry_run: isDry, keep_failed: keep, deleted_runs: deleted, freed_bytes: freed } });
    return { deleted_runs: deleted, freed_bytes: freed, dry_run: isDry };
  }
}

