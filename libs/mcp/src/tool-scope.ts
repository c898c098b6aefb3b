import { validateProjectId, validateTaskId, type StorageIndex } from '@app/storage';
import type { McpScope } from './mcp.types';
import { McpInputError } from './tool-result';

const given = (v: string | undefined): string | undefined => (v !== undefined && v.trim() !== '' ? v.trim() : undefined);

/** Why a confined session refuses something: names the session's scope. */
function outside(what: string, scope: McpScope): McpInputError {
  const flags = scope.confine === 'task' ? `--project ${scope.projectId} --task ${scope.taskId}` : `--project ${scope.projectId}`;
  return new McpInputError(`${what} is outside this session's scope (run-agent mcp ${flags})`);
}

/** The project a tool acts on: its `project` argument, else the server's scope (validated as the CLI does). */
export function projectOf(scope: McpScope, project?: string): string {
  const id = given(project) ?? scope.projectId;
  if (!id) throw new McpInputError('project is required: this server is not scoped to a project (pass project)');
  const projectId = validateProjectId(id);
  if (scope.confine && projectId !== scope.projectId) throw outside(`project ${projectId}`, scope);
  return projectId;
}

/** The task a bus tool acts on: its `task` argument, else the scope's task when the project is the scope's. */
export function busTaskOf(scope: McpScope, projectId: string, task?: string): string | undefined {
  const explicit = given(task);
  if (explicit) return validateTaskId(explicit);
  return projectId === scope.projectId ? scope.taskId : undefined;
}

/** The task a task tool acts on: its `task` argument (required). */
export function taskOf(task: string | undefined): string {
  const id = given(task);
  if (!id) throw new McpInputError('task is required');
  return validateTaskId(id);
}

/**
 * The tasks a session confined with `--task T` may see and act on: T, the tasks this session
 * started, and every task with a run descending from their runs (sub-tasks started by their
 * agents, at any depth). Unconfined or project-confined sessions see every task of their projects.
 */
export class TaskScope {
  private readonly started = new Set<string>();

  constructor(
    readonly scope: McpScope,
    private readonly index: StorageIndex,
  ) {}

  /** Records a task started by this session (task_start). */
  noteStarted(projectId: string, taskId: string): void {
    this.started.add(`${projectId}/${taskId}`);
  }

  /** The tasks of the project this session may see, in listing order. */
  tasksOf(projectId: string): string[] {
    const all = this.index.listTasks(projectId);
    if (this.scope.confine !== 'task') return all;
    const allowed = this.allowedTasks(projectId, all);
    return all.filter((t) => allowed.has(t));
  }

  /** Throws the scope error when a task of the project is outside a task-confined session. */
  check(projectId: string, taskId: string | undefined): void {
    if (this.scope.confine !== 'task') return;
    if (!taskId) throw outside(`the bus of project ${projectId}`, this.scope);
    if (!this.allows(projectId, taskId)) throw outside(`task ${taskId}`, this.scope);
  }

  /** A task task_start may start: a new one, or one this session may see. */
  checkStart(projectId: string, taskId: string): void {
    if (this.scope.confine !== 'task' || !this.index.listTasks(projectId).includes(taskId)) return;
    if (!this.allows(projectId, taskId)) throw outside(`task ${taskId}`, this.scope);
  }

  allows(projectId: string, taskId: string): boolean {
    if (this.scope.confine !== 'task') return true;
    if (projectId !== this.scope.projectId) return false;
    if (taskId === this.scope.taskId || this.started.has(`${projectId}/${taskId}`)) return true;
    return this.allowedTasks(projectId, this.index.listTasks(projectId)).has(taskId);
  }

  /** The scope's task, the tasks started here, and (to a fixed point) every task with a run whose parent run is theirs. */
  private allowedTasks(projectId: string, all: string[]): Set<string> {
    const allowed = new Set<string>(all.filter((t) => t === this.scope.taskId || this.started.has(`${projectId}/${t}`)));
    const parents = new Map<string, { runs: string[]; parentRuns: string[] }>();
    for (const t of all) {
      const runs = this.index.listRuns(projectId, t);
      const parentRuns = runs.map((r) => this.index.runInfo(projectId, t, r)?.parent_run_id ?? '').filter((p) => p !== '');
      parents.set(t, { runs, parentRuns });
    }
    const runIds = new Set<string>([...allowed].flatMap((t) => parents.get(t)?.runs ?? []));
    if (this.scope.runId) runIds.add(this.scope.runId);
    for (let grew = true; grew; ) {
      grew = false;
      for (const t of all) {
        if (allowed.has(t)) continue;
        const rec = parents.get(t)!;
        if (rec.parentRuns.some((p) => runIds.has(p))) {
          allowed.add(t);
          rec.runs.forEach((r) => runIds.add(r));
          grew = true;
        }
      }
    }
    return allowed;
  }
}
