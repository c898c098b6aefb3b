import { Inject, Injectable, Logger } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AGENT_TYPES, isAgentType, normalizeAgentType } from '@app/agents';
import { MessageBusService } from '@app/messagebus';
import { RunnerService, TaskStartRefused, threadParentRef, validateTaskSettings } from '@app/runner';
import { applyTaskWrite, queueNewTask, refuseUnroutedTaskWrites, stopTaskRouted } from './scaleout-hooks';
import { newRunInfo, runInfoFile, validateProjectId, validateTaskId, writeRunInfo } from '@app/storage';
import { API_CONTEXT, ApiContext } from '../common/api-context';
import { badRequest, conflict, notFound, unprocessable } from '../common/api-error';
import { checkId } from '../common/ids';
import { ProjectDataService, isDir } from '../projects/project-data.service';
import { AuditLogService } from '../security/audit-log.service';
import { CreateTaskDto, ProcessImportDto } from './dto/create-task.dto';
import { PlannerBridge } from './planner-bridge';
import { LaunchRequest, TASK_LAUNCHER, TaskLauncher } from './task-launcher';
import { resolveThreadParent } from './thread-link';
import { formatTime } from '../common/go-format';
import { checkIsolation } from './worktree-request';
import type { CreateTaskResponse } from '@app/contracts';

const ATTACH_MODES = ['create', 'attach', 'resume'];

function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? path.join(os.homedir(), p.slice(1)) : p;
}

/** Creating, finding and cancelling tasks for /api/v1/tasks (#9–#12). */
@Injectable()
export class TasksService {
  private readonly logger = new Logger('tasks');

  constructor(
    @Inject(API_CONTEXT) private readonly ctx: ApiContext,
    @Inject(TASK_LAUNCHER) private readonly launcher: TaskLauncher,
    private readonly planner: PlannerBridge,
    private readonly data: ProjectDataService,
    private readonly audit: AuditLogService,
    private readonly runner: RunnerService,
    private readonly bus: MessageBusService,
  ) {}

  async create(body: CreateTaskDto, req: FastifyRequest): Promise<CreateTaskResponse> {
    // the storage rules as well (run folders need them), checked before anything is written
    const projectId = validateProjectId(checkId(body.project_id, 'project_id'));
    const taskId = validateTaskId(checkId(body.task_id, 'task_id'));
    const agentType = body.agent_type.trim();
    if (agentType === '') throw badRequest('agent_type is required');
    checkAgentType(agentType, this.ctx.config?.agents);
    if (body.prompt.trim() === '') throw badRequest('prompt is required');
    if (body.thread_message_type !== undefined && !body.thread_parent) throw badRequest('thread_message_type requires thread_parent');
    refuseUnroutedTaskWrites(this.ctx, body);
    const parentMessage = body.thread_parent ? resolveThreadParent(this.ctx.layout, body.thread_parent) : undefined;
    if (body.thread_parent && (body.thread_message_type ?? 'USER_REQUEST') !== 'USER_REQUEST') {
      throw badRequest('thread_message_type must be USER_REQUEST');
    }
    let projectRoot: string | undefined;
    if (body.project_root?.trim()) {
      projectRoot = expandHome(body.project_root.trim());
      if (!fs.existsSync(projectRoot)) throw badRequest(`project_root does not exist: ${projectRoot}`);
    }
    const isolation = await checkIsolation(body, projectRoot, this.data.taskDir(projectId, taskId));
    const settings = validateTaskSettings({
      max_tokens: body.max_tokens,
      max_cost_usd: body.max_cost_usd,
      max_wall_time: body.max_wall_time,
      resume_mode: body.resume_mode,
      done_criteria: body.done_criteria,
      done_criteria_timeout: body.done_criteria_timeout,
      max_delegation_depth: body.max_delegation_depth,
      max_children_per_run: body.max_children_per_run,
      max_runs_per_tree: body.max_runs_per_tree,
    });
    const attachMode = body.attach_mode?.trim() || 'create';
    if (!ATTACH_MODES.includes(attachMode)) throw badRequest(`invalid attach_mode "${attachMode}": must be create, attach, or resume`);
    if (body.process_import) checkProcessImport(body.process_import);
    if (body.config && Object.values(body.config).some((v) => typeof v !== 'string')) throw badRequest('config values must be strings');

    // the one start-a-task use case (libs/runner/src/tasks/start-task.ts): checks, then files and the first run
    const start = {
      writers: this.bus.writers,
      layout: this.ctx.layout,
      config: this.ctx.config,
      projectId,
      taskId,
      prompt: body.prompt,
      agent: agentType,
      env: body.config,
      cwd: projectRoot,
      dependsOn: body.depends_on,
      settings,
      resume: attachMode === 'resume',
      threadParent: parentMessage,
      linkedAt: formatTime(new Date()),
      // 422 for what a started loop would fail on at once (missing CLI, bad agent config)
      skipPreflight: !!body.process_import || !!this.ctx.disableTaskStart,
      // never a second agent next to a live one whose runner died (issue #11): 409 naming its pid
      refuseOrphan: !body.process_import,
    };
    if (this.ctx.scaleout && !this.ctx.disableTaskStart) {
      // the worker creates the files; the replica is written only by replication
      const { dependsOn } = await refusal(this.runner.checkStartTask(start), agentType, taskId);
      const threadParent = parentMessage && threadParentRef(parentMessage);
      // another host resolves the repository and base itself
      const launch = { projectId, taskId, prompt: body.prompt, agentType, config: body.config, projectRoot, attachMode, isolation: isolation && { ...isolation, resolved: undefined }, dependsOn, settings, threadParent, linkedAt: start.linkedAt };
      const { runId, held } = await queueNewTask({ ...this.ctx, scaleout: this.ctx.scaleout }, launch);
      this.audit.record(req, { endpoint: 'POST /api/v1/tasks', project_id: projectId, task_id: taskId, run_id: runId, payload: { ...body, attach_mode: attachMode, depends_on: dependsOn, project_root: projectRoot } });
      return { project_id: projectId, task_id: taskId, run_id: runId, status: held ? 'queued' : 'started', depends_on: dependsOn?.length ? dependsOn : undefined };
    }
    const { runId, runDir, dependsOn } = await refusal(this.runner.startTask(start), agentType, taskId);
    this.audit.record(req, {
      endpoint: 'POST /api/v1/tasks',
      project_id: projectId,
      task_id: taskId,
      run_id: runId,
      payload: { ...body, attach_mode: attachMode, depends_on: dependsOn, project_root: projectRoot },
    });

    const request: LaunchRequest = { projectId, taskId, runId, runDir, prompt: body.prompt, agentType, config: body.config, projectRoot, attachMode, isolation };
    let status: 'started' | 'queued' = 'started';
    let queuePosition: number | undefined;
    if (body.process_import) {
      importProcess(runDir, request, body.process_import);
    } else if (!this.ctx.disableTaskStart) {
      if (this.planner.enabled) {
        const res = await this.planner.planner!.submit({ ...request, request: { ...body, attach_mode: attachMode, depends_on: dependsOn, project_root: projectRoot } });
        status = res.status;
        queuePosition = res.queuePosition;
      } else {
        void this.launcher.launch(request).catch((err) => this.logger.error(`launch ${projectId}/${taskId}: ${(err as Error).message}`));
      }
    }
    return { project_id: projectId, task_id: taskId, run_id: runId, status, queue_position: queuePosition, depends_on: dependsOn?.length ? dependsOn : undefined };
  }

  /** The agent a task started without one uses (config defaults.agent; '' when none is set). */
  defaultAgent(): string {
    return this.ctx.config?.defaults?.agent ?? '';
  }

  /** Finds a task by id, in one project or across all (404 / 409 `multiple tasks found`). */
  locate(taskIdRaw: string, projectIdRaw?: string): { projectId: string; taskId: string } {
    const taskId = checkId(taskIdRaw, 'task_id');
    if (projectIdRaw !== undefined && projectIdRaw !== '') {
      const projectId = checkId(projectIdRaw, 'project_id');
      if (!this.data.taskExists(projectId, taskId) && this.data.runs(projectId, taskId).length === 0) throw notFound('task not found');
      return { projectId, taskId };
    }
    const matches = this.data.projectIds().filter((p) => isDir(path.join(this.ctx.root, p, taskId)) || this.data.pending(p, taskId));
    if (matches.length === 0) throw notFound('task not found');
    if (matches.length > 1) throw conflict('multiple tasks found', { task_id: taskId });
    return { projectId: matches[0], taskId };
  }

  async cancel(taskIdRaw: string, projectIdRaw: string | undefined, req: FastifyRequest) {
    const { projectId, taskId } = this.locate(taskIdRaw, projectIdRaw);
    const taskDir = this.data.taskDir(projectId, taskId);
    await applyTaskWrite(this.ctx, { op: 'done', projectId, taskId });
    const running = this.data.runs(projectId, taskId).filter((r) => r.info.status === 'running' && r.info.process_ownership !== 'external');
    await this.planner.dropTask(projectId, taskId);
    void stopTaskRouted(this.ctx.scaleout, this.runner, { projectId, taskId, dir: taskDir }, { graceMs: this.ctx.stopGraceMs, stoppedBy: 'api task cancel' }).catch((err) => this.logger.warn(`stop task ${projectId}/${taskId}: ${(err as Error).message}`));
    this.audit.record(req, { endpoint: 'DELETE /api/v1/tasks/{task_id}', project_id: projectId, task_id: taskId, payload: { stopped_runs: running.length } });
    return { stopped_runs: running.length };
  }
}

/** A refused start as the API answers it: the agent preflight 422 (naming the agent), a dependency cycle 409. */
async function refusal<T>(start: Promise<T>, agentType: string, taskId: string): Promise<T> {
  try {
    return await start;
  } catch (err) {
    if (err instanceof TaskStartRefused && err.stage === 'preflight') throw unprocessable(err.message, { agent_type: agentType });
    if (err instanceof TaskStartRefused && err.stage === 'cycle') throw conflict(err.message, { task_id: taskId });
    throw err;
  }
}

/** Accepts a known agent type or the name of a configured agent, as the runner would select it. */
function checkAgentType(agentType: string, configured: Record<string, unknown> = {}): void {
  if (isAgentType(normalizeAgentType(agentType)) || Object.prototype.hasOwnProperty.call(configured, agentType)) return;
  const names = [...new Set([...AGENT_TYPES, ...Object.keys(configured).sort()])];
  throw unprocessable(`unknown agent_type "${agentType}": use one of ${names.join(', ')}`);
}

function checkProcessImport(pi: ProcessImportDto): void {
  if (!(pi.pid > 0)) throw badRequest('process_import.pid must be > 0');
  if (!pi.stdout_path?.trim() && !pi.stderr_path?.trim()) throw badRequest('process_import requires stdout_path or stderr_path');
  if (pi.ownership !== undefined && !['managed', 'external'].includes(pi.ownership)) throw badRequest('process_import.ownership must be managed or external');
}

/** Adopts a running process as the task's first run: a run-info that the liveness check will finalise. */
function importProcess(runDir: string, req: LaunchRequest, pi: ProcessImportDto): void {
  const info = newRunInfo({
    run_id: req.runId,
    project_id: req.projectId,
    task_id: req.taskId,
    agent: req.agentType,
    process_ownership: pi.ownership ?? 'external',
    pid: pi.pid,
    pgid: pi.pgid ?? pi.pid,
    cwd: req.projectRoot,
    stdout_path: pi.stdout_path || undefined,
    stderr_path: pi.stderr_path || undefined,
    commandline: pi.commandline,
  });
  writeRunInfo(runInfoFile(runDir), info);
}
