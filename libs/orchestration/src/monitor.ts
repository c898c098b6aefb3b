import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readMessages } from '@app/messagebus';
import { AppConfig, LivenessProbe, RunInfo, RunsLayout, RUN_INFO_FILE, hasDoneFile, isCancelled, readRunInfoReconciled, readStopRequested, readTaskPrompt, removeDone, removeStopRequested, validateProjectId, writeDone, writeTaskPromptIfAbsent, runOutputFile, taskRunsDir, RUN_OUTPUT_FILE, TASK_BUS_FILE } from '@app/storage';
import type { JobOptions, JobResult } from '@app/runner';
import type { StopOptions, StopRunResult } from '@app/runner';

export const MONITOR_LOCK_FILE = '.monitor.pid';
export const DEFAULT_MONITOR_STALE_MS = 20 * 60_000;
export const DEFAULT_MONITOR_RATE_LIMIT_MS = 2_000;
export const DEFAULT_MONITOR_INTERVAL_MS = 30_000;
const STOP_REQUEST_WINDOW_MS = 60_000;
const ACTIVITY_TYPES = new Set(['FACT', 'DECISION', 'ERROR', 'REVIEW']);
const TASK_ID_IN_TEXT = /task-\d{8}-\d{6}-[a-z0-9][a-z0-9-]{1,48}[a-z0-9]/;
const UNCHECKED = '- [ ] ';

export interface TodoItem {
  taskId: string;
  /** The line after `- [ ] `: the task prompt when monitor creates the task. */
  text: string;
}

export type MonitorAction = 'skip' | 'start' | 'resume' | 'recover' | 'finalize';

export interface MonitorDecision {
  action: MonitorAction;
  reason: string;
  /** The run folder a `recover` stops. */
  runDir?: string;
  /** The run a `recover` stops (server mode). */
  runId?: string;
}

/** Unchecked `- [ ] ` items that contain a task id (the first one on the line). */
export function parseTodo(text: string): TodoItem[] {
  const items: TodoItem[] = [];
  for (const line of text.split('\n')) {
    const trimmed = line.replace(/\r$/, '').trimStart();
    if (!trimmed.startsWith(UNCHECKED)) continue;
    const m = TASK_ID_IN_TEXT.exec(trimmed);
    if (m) items.push({ taskId: m[0], text: trimmed.slice(UNCHECKED.length).trim() });
  }
  return items;
}

/** Flips the first unchecked line naming the task to `- [x] `; false when none is left. */
export function checkTodoItem(todoPath: string, taskId: string): boolean {
  const lines = readFileSync(todoPath, 'utf8').split('\n');
  const i = lines.findIndex((l) => l.trimStart().startsWith(UNCHECKED) && TASK_ID_IN_TEXT.exec(l.trimStart())?.[0] === taskId);
  if (i < 0) return false;
  lines[i] = lines[i].replace(UNCHECKED, '- [x] ');
  writeFileSync(todoPath, lines.join('\n'), { mode: 0o644 });
  return true;
}

/** STOP-REQUESTED is active when permanent or younger than 60 s; expired or unparsable markers are removed. */
export function activeStopRequest(taskDir: string, now: Date): boolean {
  const req = readStopRequested(taskDir);
  if (!req) return false;
  if (req.permanent) return true;
  if (req.requestedAt && now.getTime() - req.requestedAt.getTime() < STOP_REQUEST_WINDOW_MS) return true;
  removeStopRequested(taskDir);
  return false;
}

function latestRun(taskDir: string, probe: LivenessProbe): { dir: string; info: RunInfo } | undefined {
  const runsDir = taskRunsDir(taskDir);
  let names: string[];
  try {
    names = readdirSync(runsDir).sort();
  } catch {
    return undefined;
  }
  for (const name of names.reverse()) {
    const dir = join(runsDir, name);
    if (!existsSync(join(dir, RUN_INFO_FILE))) continue;
    try {
      return { dir, info: readRunInfoReconciled(join(dir, RUN_INFO_FILE), probe) };
    } catch {
      continue; // unreadable run-info: look at the previous run
    }
  }
  return undefined;
}

/** Time of the newest FACT/DECISION/ERROR/REVIEW message of the task bus (any run). */
function lastActivity(taskDir: string): Date | undefined {
  const bus = join(taskDir, TASK_BUS_FILE);
  if (!existsSync(bus)) return undefined;
  let last: Date | undefined;
  try {
    for (const m of readMessages(bus)) if (ACTIVITY_TYPES.has(m.type.toUpperCase()) && (!last || m.ts > last)) last = m.ts;
  } catch {
    return undefined;
  }
  return last;
}

function hasOutput(dir: string, info: RunInfo): boolean {
  const path = info.output_path || runOutputFile(dir);
  try {
    return statSync(path).size > 0 && readFileSync(path, 'utf8').trim() !== '';
  } catch {
    return false;
  }
}

/** What monitor does with one TODO task (cli-storage.md §1.16), CANCELLED honoured. */
export function decideMonitorAction(
  layout: RunsLayout,
  projectId: string,
  taskId: string,
  opts: { staleAfterMs?: number; now?: Date; probe: LivenessProbe },
): MonitorDecision {
  const now = opts.now ?? new Date();
  const { probe } = opts;
  const staleMs = opts.staleAfterMs && opts.staleAfterMs > 0 ? opts.staleAfterMs : DEFAULT_MONITOR_STALE_MS;
  const taskDir = layout.taskDir(projectId, taskId);
  if (!existsSync(taskDir)) return { action: 'start', reason: 'no task folder yet' };
  if (isCancelled(taskDir)) return { action: 'skip', reason: 'task is CANCELLED' };
  if (hasDoneFile(taskDir)) return { action: 'skip', reason: 'already DONE' };
  const stopRequested = (): boolean => activeStopRequest(taskDir, now);
  const latest = latestRun(taskDir, probe);
  if (!latest) return stopRequested() ? { action: 'skip', reason: 'no runs yet, but a stop was requested' } : { action: 'start', reason: 'no runs yet' };
  const { dir, info } = latest;
  switch (info.status) {
    case 'running': {
      if (!probe.isRunAlive(info)) {
        return stopRequested() ? { action: 'skip', reason: `run ${info.run_id} died, but a stop was requested` } : { action: 'resume', reason: `run ${info.run_id} is not alive` };
      }
      const activity = lastActivity(taskDir);
      const since = activity && activity >= info.start_time ? activity : info.start_time;
      const quietMs = now.getTime() - since.getTime();
      if (quietMs >= staleMs) return { action: 'recover', reason: `run ${info.run_id} alive but no FACT/DECISION/ERROR/REVIEW for ${Math.round(quietMs / 1000)}s`, runDir: dir };
      return { action: 'skip', reason: `run ${info.run_id} is running` };
    }
    case 'completed':
      return hasOutput(dir, info) ? { action: 'finalize', reason: `run ${info.run_id} completed with output` } : { action: 'skip', reason: `run ${info.run_id} completed without output` };
    case 'failed':
      return stopRequested() ? { action: 'skip', reason: `run ${info.run_id} failed, but a stop was requested` } : { action: 'resume', reason: `run ${info.run_id} failed` };
    default:
      return { action: 'start', reason: `latest run status is ${info.status}` };
  }
}

/** `<root>/<project>/.monitor.pid`: one daemon per project. */
export class MonitorLock {
  private held = false;
  constructor(readonly path: string, private readonly probe: LivenessProbe) {}

  acquire(projectId: string): void {
    if (existsSync(this.path)) {
      const pid = Number(readFileSync(this.path, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && this.probe.isPidAlive(pid)) {
        throw new Error(`monitor already running for project "${projectId}" (PID ${pid}); lockfile: ${this.path}`);
      }
      rmSync(this.path, { force: true }); // dead or corrupt lock
    }
    const tmp = `${this.path}.tmp`;
    writeFileSync(tmp, `${process.pid}\n`);
    renameSync(tmp, this.path);
    if (readFileSync(this.path, 'utf8').trim() !== String(process.pid)) throw new Error(`monitor lock taken by another process: ${this.path}`);
    this.held = true;
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    try {
      if (readFileSync(this.path, 'utf8').trim() === String(process.pid)) rmSync(this.path, { force: true });
    } catch {
      // already gone
    }
  }
}

export interface MonitorPassOptions {
  /** The runs root's layout and the liveness probe (of the composition root). */
  layout: RunsLayout;
  probe: LivenessProbe;
  projectId: string;
  todoPath: string;
  agent?: string;
  config?: AppConfig;
  cwd?: string;
  env?: Record<string, string>;
  staleAfterMs?: number;
  rateLimitMs?: number;
  dryRun?: boolean;
  /** Task ids with a launched job still in flight (daemon mode): not touched again. */
  inFlight?: Set<string>;
  runJob: (opts: JobOptions) => Promise<JobResult>;
  stopRun: (runDir: string, opts?: StopOptions) => Promise<StopRunResult>;
  stopGraceMs?: number;
  out: (line: string) => void;
  signal?: AbortSignal;
}

export interface MonitorPassResult {
  decisions: Array<MonitorDecision & { taskId: string }>;
  /** Jobs started by this pass; settle with a one-line outcome (true = the run completed). */
  launched: Array<Promise<boolean>>;
  /** Actions of this pass that failed before a job started (e.g. an unknown agent). */
  failed: number;
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((done) => {
    if (signal?.aborted) return done();
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), done()), { once: true });
  });

/** One monitor pass over the TODO file: decide, print, act (unless dry-run). */
export async function monitorPass(opts: MonitorPassOptions): Promise<MonitorPassResult> {
  validateProjectId(opts.projectId);
  const text = readFileSync(opts.todoPath, 'utf8');
  const todos = parseTodo(text);
  const result: MonitorPassResult = { decisions: [], launched: [], failed: 0 };
  if (todos.length === 0) {
    opts.out(`monitor: no pending task IDs found in ${opts.todoPath}`);
    return result;
  }
  opts.out(`monitor: checking ${todos.length} pending task(s) from ${opts.todoPath}`);
  const { layout } = opts;
  let first = true;
  for (const todo of todos) {
    if (opts.signal?.aborted) break;
    const decision: MonitorDecision = opts.inFlight?.has(todo.taskId)
      ? { action: 'skip', reason: 'job launched by this monitor is still running' }
      : decideMonitorAction(layout, opts.projectId, todo.taskId, { staleAfterMs: opts.staleAfterMs, probe: opts.probe });
    result.decisions.push({ ...decision, taskId: todo.taskId });
    opts.out(`  [${decision.action.padEnd(8)}] ${todo.taskId} — ${decision.reason}`);
    if (decision.action === 'skip') continue;
    if (!first) await sleep(opts.rateLimitMs ?? DEFAULT_MONITOR_RATE_LIMIT_MS, opts.signal);
    first = false;
    if (opts.dryRun) continue;
    const taskDir = layout.taskDir(opts.projectId, todo.taskId);
    try {
      if (decision.action === 'finalize') {
        writeDone(taskDir);
        if (!checkTodoItem(opts.todoPath, todo.taskId)) opts.out(`  [WARN]  ${todo.taskId}: no unchecked line left in ${opts.todoPath}`);
        opts.out(`  [OK]    finalized ${todo.taskId} (DONE created)`);
        continue;
      }
      if (!opts.agent && !opts.config) {
        opts.out(`  [SKIP]  ${todo.taskId}: --agent or a config with agents is required to start/resume tasks`);
        continue;
      }
      if (decision.action === 'recover' && decision.runDir) {
        await opts.stopRun(decision.runDir, { graceMs: opts.stopGraceMs, stoppedBy: `run-agent monitor (pid ${process.pid})` });
        opts.out(`  [OK]    stopped stale task ${todo.taskId}`);
      }
      mkdirSync(taskDir, { recursive: true });
      writeTaskPromptIfAbsent(taskDir, todo.text);
      removeDone(taskDir);
      removeStopRequested(taskDir);
      // Upstream launched the job without a prompt; the task's TASK.md is the prompt.
      const prompt = (readTaskPrompt(taskDir) ?? '').trim() || todo.text;
      opts.inFlight?.add(todo.taskId);
      const job = opts
        .runJob({ root: layout.root, projectId: opts.projectId, taskId: todo.taskId, prompt, agent: opts.agent, config: opts.config, cwd: opts.cwd, env: opts.env, signal: opts.signal })
        .then(
          (r) => {
            opts.out(r.ok ? `  [OK]    run completed for ${todo.taskId} (${r.runId})` : `  [ERROR] run ${todo.taskId}: ${r.error ?? 'agent execution failed'}`);
            return r.ok;
          },
          (err: unknown) => {
            opts.out(`  [ERROR] run ${todo.taskId}: ${err instanceof Error ? err.message : String(err)}`);
            return false;
          },
        )
        .finally(() => opts.inFlight?.delete(todo.taskId));
      result.launched.push(job);
      opts.out(`  [OK]    launched job for ${todo.taskId}`);
    } catch (err) {
      result.failed++;
      opts.out(`  [ERROR] ${decision.action} ${todo.taskId}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return result;
}

/** What the conductor API (`GET /api/projects/{p}/tasks/{t}`) tells about a task. */
export interface ApiTaskDetail {
  done: boolean;
  last_activity?: string;
  runs: Array<{ id: string; status: string; start_time?: string; files?: Array<{ name: string; size?: number }> }>;
}

/**
 * The monitor decision for server mode (`conductor monitor`), from the task detail of the API;
 * `undefined` detail = the server does not know the task. `finalize` on a DONE task only ticks the
 * TODO item; on a completed run it also asks the server to write DONE.
 */
export function decideFromTaskDetail(detail: ApiTaskDetail | undefined, opts: { staleAfterMs?: number; now?: Date } = {}): MonitorDecision {
  if (!detail) return { action: 'start', reason: 'unknown to the server' };
  if (detail.done) return { action: 'finalize', reason: 'DONE on the server' };
  const latest = detail.runs.at(-1);
  if (!latest) return { action: 'start', reason: 'no runs yet' };
  const now = (opts.now ?? new Date()).getTime();
  const staleMs = opts.staleAfterMs && opts.staleAfterMs > 0 ? opts.staleAfterMs : DEFAULT_MONITOR_STALE_MS;
  switch (latest.status) {
    case 'running': {
      const since = Date.parse(detail.last_activity ?? latest.start_time ?? '');
      const quietMs = Number.isNaN(since) ? 0 : now - since;
      if (quietMs >= staleMs) return { action: 'recover', reason: `run ${latest.id} alive but quiet for ${Math.round(quietMs / 1000)}s`, runId: latest.id };
      return { action: 'skip', reason: `run ${latest.id} is running` };
    }
    case 'completed': {
      const output = latest.files?.find((f) => f.name === RUN_OUTPUT_FILE);
      return output && (output.size ?? 0) > 0
        ? { action: 'finalize', reason: `run ${latest.id} completed with output` }
        : { action: 'skip', reason: `run ${latest.id} completed without output` };
    }
    case 'failed':
      return { action: 'resume', reason: `run ${latest.id} failed` };
    default:
      return { action: 'start', reason: `latest run status is ${latest.status}` };
  }
}
