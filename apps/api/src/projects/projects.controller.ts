import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunnerService } from '@app/runner';
import { TASK_ID_PATTERN } from '@app/storage';
import { badRequest, conflict, notFound } from '../common/api-error';
import { isTruthyFlag, isZeroTime, parseGoDurationOrUndefined } from '../common/go-format';
import { checkId, checkOptionalId } from '../common/ids';
import { AuditLogService } from '../security/audit-log.service';
import { refuseBrowser } from '../security/browser-origin';
import { confine } from '../security/path-confinement';
import { CreateProjectDto } from './dto/create-project.dto';
import { selectFlatRuns } from './flat-runs';
import { isDir, PROJECT_ROOT_MARKER, ProjectDataService } from './project-data.service';
import { toFlatRun } from './shapes';

const HOME_DIRS_LIMIT = 20;

function publicProject(p: NonNullable<ReturnType<ProjectDataService['project']>>) {
  const { _last: _ignored, ...rest } = p;
  return rest;
}

function dirSize(p: string): number {
  let total = 0;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(p, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const full = path.join(p, e.name);
    if (e.isDirectory()) total += dirSize(full);
    else {
      try {
        total += fs.lstatSync(full).size;
      } catch {
        // vanished meanwhile
      }
    }
  }
  return total;
}

@Controller('api/projects')
export class ProjectsController {
  constructor(
    private readonly data: ProjectDataService,
    private readonly audit: AuditLogService,
    private readonly runner: RunnerService,
  ) {}

  /** #21 */
  @Get()
  list() {
    const projects = this.data
      .allProjectIds()
      .map((p) => this.data.project(p))
      .filter((p): p is NonNullable<typeof p> => !!p)
      .sort((a, b) => b._last - a._last || (a.id < b.id ? -1 : 1));
    return { projects: projects.map(publicProject) };
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
    let st: fs.Stats;
    try {
      st = fs.statSync(root);
    } catch {
      throw badRequest(`project_root does not exist: ${root}`);
    }
    if (!st.isDirectory()) throw badRequest(`project_root is not a directory: ${root}`);
    const dir = this.data.projectDir(projectId);
    if (isDir(dir) || this.data.allRuns().some((r) => r.info.project_id === projectId)) {
      throw conflict('project already exists', { project_id: projectId });
    }
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, PROJECT_ROOT_MARKER), `${root}\n`);
    this.audit.record(req, { endpoint: 'POST /api/projects', project_id: projectId, payload: { project_id: projectId, project_root: body.project_root } });
    return publicProject(this.data.project(projectId)!);
  }

  /** #23 */
  @Get('home-dirs')
  homeDirs() {
    const dirs = new Set<string>();
    for (const r of this.data.allRuns()) {
      if (dirs.size >= HOME_DIRS_LIMIT) break;
      const cwd = r.info.cwd;
      if (cwd && !this.data.layout.contains(cwd)) dirs.add(cwd);
    }
    for (const p of this.data.projectIds()) {
      if (dirs.size >= HOME_DIRS_LIMIT) break;
      const m = this.data.marker(p);
      if (m?.root) dirs.add(m.root);
    }
    return { dirs: [...dirs].sort() };
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
      await Promise.all(running.filter((r) => r.info.process_ownership !== 'external').map((r) => this.runner.stopRun(r.dir, { graceMs: this.data.stopGraceMs, stoppedBy: 'api project deletion' }).catch(() => undefined)));
    }
    const deletedTasks = fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory() && /^task-\d{8}-\d{6}-.+/.test(e.name)).length;
    const freed = dirSize(dir);
    confine(this.data.root, dir, 'project path');
    fs.rmSync(dir, { recursive: true, force: true });
    this.audit.record(req, { endpoint: 'DELETE /api/projects/{project_id}', project_id: id, payload: { force: force === 'true', deleted_tasks: deletedTasks, freed_bytes: freed } });
    return { project_id: id, deleted_tasks: deletedTasks, freed_bytes: freed };
  }

  /** #26 */
  @Get(':p/stats')
  stats(@Param('p') p: string) {
    const id = checkId(p, 'project_id');
    const dir = this.data.projectDir(id);
    if (!isDir(dir)) throw notFound('project not found');
    const stats = { project_id: id, total_tasks: 0, total_runs: 0, running_runs: 0, completed_runs: 0, failed_runs: 0, crashed_runs: 0, message_bus_files: 0, message_bus_total_bytes: 0 };
    const countBus = (d: string) => {
      for (const e of safeReaddir(d)) {
        if (e.isFile() && e.name.endsWith('MESSAGE-BUS.md')) {
          stats.message_bus_files++;
          stats.message_bus_total_bytes += fs.statSync(path.join(d, e.name)).size;
        }
      }
    };
    countBus(dir);
    for (const e of safeReaddir(dir)) {
      if (!e.isDirectory()) continue;
      if (TASK_ID_PATTERN.test(e.name)) stats.total_tasks++;
      countBus(path.join(dir, e.name));
      stats.total_runs += safeReaddir(path.join(dir, e.name, 'runs')).filter((x) => x.isDirectory()).length;
    }
    for (const r of this.data.runs(id)) {
      if (r.info.status === 'running') stats.running_runs++;
      else if (r.info.status === 'completed') stats.completed_runs++;
      else if (r.info.status === 'failed') stats.failed_runs++;
      else stats.crashed_runs++;
    }
    return stats;
  }

  /** #27 */
  @Get(':p/runs/flat')
  flat(@Param('p') p: string, @Query('active_only') activeOnly?: string, @Query('selected_task_id') selected?: string, @Query('selected_task_limit') limitText?: string) {
    const id = checkId(p, 'project_id');
    const selectedTask = checkOptionalId(selected, 'selected_task_id');
    let limit = 0;
    if (limitText !== undefined && limitText !== '') {
      if (!/^\d+$/.test(limitText.trim())) throw badRequest('invalid selected_task_limit', { selected_task_limit: 'must be a non-negative integer' });
      limit = Math.min(200, Number(limitText.trim()));
    }
    const runs = this.data.runs(id);
    return { runs: selectFlatRuns(runs, { activeOnly: isTruthyFlag(activeOnly), selectedTask, limit }).map(toFlatRun) };
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
    const cutoff = Date.now() - ms;
    let deleted = 0;
    let freed = 0;
    for (const r of this.data.runs(id)) {
      const s = r.info.status;
      if (s !== 'completed' && !(s === 'failed' && !keep)) continue;
      const ref = isZeroTime(r.info.start_time) ? r.info.end_time : r.info.start_time;
      if (isZeroTime(ref) || ref.getTime() >= cutoff) continue;
      deleted++;
      freed += dirSize(r.dir);
      if (!isDry) {
        confine(this.data.root, r.dir, 'run path');
        fs.rmSync(r.dir, { recursive: true, force: true });
      }
    }
    this.audit.record(req, { endpoint: 'POST /api/projects/{project_id}/gc', project_id: id, payload: { older_than: text, dry_run: isDry, keep_failed: keep, deleted_runs: deleted, freed_bytes: freed } });
    return { deleted_runs: deleted, freed_bytes: freed, dry_run: isDry };
  }
}

function safeReaddir(d: string): fs.Dirent[] {
  try {
    return fs.readdirSync(d, { withFileTypes: true });
  } catch {
    return [];
  }
}

