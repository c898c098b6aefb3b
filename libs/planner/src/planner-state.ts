import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseYaml, stringifyYaml, writeFileAtomic } from '@app/storage';

/** The task-create request as the API receives it (snake_case JSON fields). */
export interface PlannerTaskRequest {
  project_id: string;
  task_id: string;
  agent_type: string;
  prompt: string;
  config?: Record<string, string>;
  project_root?: string;
  attach_mode?: string;
  process_import?: {
    pid: number;
    pgid?: number;
    commandline?: string;
    stdout_path?: string;
    stderr_path?: string;
    ownership?: string;
  };
  depends_on?: string[];
  thread_parent?: { project_id: string; task_id: string; run_id: string; message_id: string; message_type?: string };
  thread_message_type?: string;
}

export type PlannerEntryState = 'queued' | 'running';

export interface PlannerEntry {
  runId: string;
  projectId: string;
  taskId: string;
  runDir: string;
  runPrompt: string;
  request: PlannerTaskRequest;
  submittedAt: Date;
  order: number;
  state: PlannerEntryState;
  startedAt?: Date;
}

export interface PlannerState {
  version: number;
  limit: number;
  nextOrder: number;
  updatedAt?: Date;
  entries: PlannerEntry[];
}

export const PLANNER_STATE_VERSION = 1;

/** Stands for Go's zero time in a parsed entry; reconciliation replaces it. */
export const MISSING_TIME = new Date(0);

export function plannerStatePath(root: string): string {
  return join(root, '.conductor', 'root-task-planner.yaml');
}

export function emptyPlannerState(limit: number): PlannerState {
  return { version: PLANNER_STATE_VERSION, limit, nextOrder: 1, entries: [] };
}

/** Go's RFC3339Nano: fractional seconds without trailing zeros. */
export function formatGoTime(date: Date): string {
  return date.toISOString().replace(/\.(\d*?)0+Z$/, (_m, digits: string) => (digits ? `.${digits}Z` : 'Z'));
}

function parseTime(value: unknown): Date | undefined {
  if (value instanceof Date) return value;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime()) || date.getUTCFullYear() <= 1) return undefined;
  return date;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v));
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : Number(v) || 0);

/**
 * The request is stored as upstream stores it: yaml.v3's default field names, i.e. the Go
 * field names lower-cased, with empty values written out rather than omitted.
 */
function encodeRequest(req: PlannerTaskRequest): Record<string, unknown> {
  const pi = req.process_import;
  const tp = req.thread_parent;
  return {
    projectid: req.project_id ?? '',
    taskid: req.task_id ?? '',
    agenttype: req.agent_type ?? '',
    prompt: req.prompt ?? '',
    config: req.config ?? {},
    projectroot: req.project_root ?? '',
    attachmode: req.attach_mode ?? '',
    processimport: pi
      ? { pid: pi.pid, pgid: pi.pgid ?? 0, commandline: pi.commandline ?? '', stdoutpath: pi.stdout_path ?? '', stderrpath: pi.stderr_path ?? '', ownership: pi.ownership ?? '' }
      : null,
    dependson: req.depends_on ?? [],
    threadparent: tp
      ? { projectid: tp.project_id, taskid: tp.task_id, runid: tp.run_id, messageid: tp.message_id, messagetype: tp.message_type ?? '' }
      : null,
    threadmessagetype: req.thread_message_type ?? '',
  };
}

function decodeRequest(raw: unknown): PlannerTaskRequest {
  const r = (raw && typeof raw === 'object' ? raw : {}) as Record<string, any>;
  const req: PlannerTaskRequest = {
    project_id: str(r.projectid),
    task_id: str(r.taskid),
    agent_type: str(r.agenttype),
    prompt: str(r.prompt),
  };
  if (r.config && typeof r.config === 'object' && Object.keys(r.config).length > 0) {
    req.config = Object.fromEntries(Object.entries(r.config as Record<string, unknown>).map(([k, v]) => [k, str(v)]));
  }
  if (str(r.projectroot)) req.project_root = str(r.projectroot);
  if (str(r.attachmode)) req.attach_mode = str(r.attachmode);
  if (Array.isArray(r.dependson) && r.dependson.length > 0) req.depends_on = r.dependson.map(str);
  if (str(r.threadmessagetype)) req.thread_message_type = str(r.threadmessagetype);
  const pi = r.processimport as Record<string, unknown> | null | undefined;
  if (pi && typeof pi === 'object') {
    req.process_import = { pid: num(pi.pid), pgid: num(pi.pgid) || undefined, commandline: str(pi.commandline) || undefined,
      stdout_path: str(pi.stdoutpath) || undefined, stderr_path: str(pi.stderrpath) || undefined, ownership: str(pi.ownership) || undefined };
  }
  const tp = r.threadparent as Record<string, unknown> | null | undefined;
  if (tp && typeof tp === 'object') {
    req.thread_parent = { project_id: str(tp.projectid), task_id: str(tp.taskid), run_id: str(tp.runid), message_id: str(tp.messageid),
      message_type: str(tp.messagetype) || undefined };
  }
  return req;
}

export function serializePlannerState(state: PlannerState): string {
  const doc: Record<string, unknown> = {
    version: state.version,
    limit: state.limit,
    next_order: state.nextOrder,
  };
  if (state.updatedAt) doc.updated_at = formatGoTime(state.updatedAt);
  doc.entries = state.entries.map((e) => {
    const entry: Record<string, unknown> = {
      run_id: e.runId,
      project_id: e.projectId,
      task_id: e.taskId,
      run_dir: e.runDir,
      run_prompt: e.runPrompt,
      request: encodeRequest(e.request),
      submitted_at: formatGoTime(e.submittedAt),
      order: e.order,
      state: e.state,
    };
    if (e.startedAt) entry.started_at = formatGoTime(e.startedAt);
    return entry;
  });
  return stringifyYaml(doc, { indent: 4, lineWidth: 0 });
}

export function parsePlannerState(text: string, limit: number): PlannerState {
  if (text.trim() === '') return emptyPlannerState(limit);
  const doc = parseYaml(text) as Record<string, unknown> | null;
  if (!doc || typeof doc !== 'object') return emptyPlannerState(limit);
  const rawEntries = Array.isArray(doc.entries) ? (doc.entries as Record<string, unknown>[]) : [];
  return {
    version: num(doc.version),
    limit: num(doc.limit),
    nextOrder: num(doc.next_order),
    updatedAt: parseTime(doc.updated_at),
    entries: rawEntries
      .filter((e) => e && typeof e === 'object')
      .map((e) => ({
        runId: str(e.run_id).trim(),
        projectId: str(e.project_id).trim(),
        taskId: str(e.task_id).trim(),
        runDir: str(e.run_dir).trim(),
        runPrompt: str(e.run_prompt),
        request: decodeRequest(e.request),
        submittedAt: parseTime(e.submitted_at) ?? MISSING_TIME,
        order: num(e.order),
        state: e.state === 'running' ? 'running' : e.state === 'queued' ? 'queued' : ('invalid' as PlannerEntryState),
        startedAt: parseTime(e.started_at),
      })),
  };
}

export function loadPlannerState(path: string, limit: number): PlannerState {
  if (!existsSync(path)) return emptyPlannerState(limit);
  try {
    return parsePlannerState(readFileSync(path, 'utf8'), limit);
  } catch (err) {
    throw new Error(`read root task planner state ${path}: ${(err as Error).message}`);
  }
}

export function savePlannerState(path: string, state: PlannerState): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileAtomic(path, serializePlannerState(state));
}
