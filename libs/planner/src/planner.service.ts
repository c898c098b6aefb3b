import { Inject, Injectable, Logger, OnApplicationBootstrap, BeforeApplicationShutdown, Optional } from '@nestjs/common';
import { join } from 'node:path';
import { MessageBusService } from '@app/messagebus';
import { createStorageIndex, isTaskDone, readRunInfoReconciled, RunInfo, runInfoFile, STORAGE_INDEX, StorageIndex } from '@app/storage';
import { entryLess, isRunningRootRun, PlannerSubmission, requestOf } from './planner-entries';
import { TASK_LAUNCHER, TaskLauncher } from './task-launcher';
import { reclaimInterruptedLoops } from './interrupted-loops';
import {
  loadPlannerState,
  MISSING_TIME,
  PlannerEntry,
  PlannerState,
  plannerStatePath,
  PLANNER_STATE_VERSION,
  savePlannerState,
  serializePlannerState,
} from './planner-state';

export const PLANNER_OPTIONS = 'PLANNER_OPTIONS';

export interface PlannerOptions {
  /** The runs root. */
  root: string;
  /** defaults.max_concurrent_root_tasks; <= 0 disables the planner. */
  limit: number;
  /** false in monitoring mode (--disable-task-start): nothing is ever launched. */
  taskStartEnabled?: boolean;
  /** How long a launched entry may have no run-info before it is re-queued (default 5 s). */
  unknownGraceMs?: number;
  /**
   * While entries are queued, free slots are re-checked this often (default 2 s; 0 = never), so
   * slots freed outside this process (a CLI-started root run, a run left by a previous server)
   * are used without waiting for the next submit.
   */
  rescheduleIntervalMs?: number;
  now?: () => Date;
}

export type { PlannerSubmission } from './planner-entries';

export interface PlannerSubmitResult {
  status: 'started' | 'queued';
  queuePosition?: number;
}

const DEFAULT_UNKNOWN_GRACE_MS = 5000;
const DEFAULT_RESCHEDULE_INTERVAL_MS = 2000;

/**
 * The root-task planner (api.md §6.1): a FIFO queue of API-created tasks that caps how many root
 * task loops run at once. The queue lives in `<root>/.conductor/root-task-planner.yaml` and is
 * reconciled against the runs on disk on every operation, so it survives server restarts.
 * Every state change is synchronous (load → reconcile → mutate → save), which makes each
 * operation atomic within the process; launches happen after the state is saved.
 */
@Injectable()
export class PlannerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('RootTaskPlanner');
  private readonly statePath: string;
  private readonly index: StorageIndex;
  private readonly inFlight = new Set<Promise<void>>();
  /** Run ids of entries whose task loop this process launched and that has not returned yet. */
  private readonly activeLoops = new Set<string>();
  private closing = false;
  private timer?: NodeJS.Timeout;
  /** Set by self-update (admin/): while it returns true, queued entries are not started (drain). */
  launchesPaused?: () => boolean;

  constructor(
    @Inject(PLANNER_OPTIONS) private readonly options: PlannerOptions,
    @Inject(TASK_LAUNCHER) private readonly launcher: TaskLauncher,
    /** Its writers post the reclaim notice of an interrupted loop to the task bus. */
    private readonly bus: MessageBusService,
    @Optional() @Inject(STORAGE_INDEX) index?: StorageIndex,
  ) {
    this.statePath = plannerStatePath(options.root);
    this.index = index?.layout.root === options.root ? index : createStorageIndex(options.root);
  }

  get enabled(): boolean {
    return this.options.limit > 0;
  }

  get limit(): number {
    return Math.max(0, this.options.limit);
  }

  private get taskStartEnabled(): boolean {
    return this.options.taskStartEnabled !== false;
  }

  private now(): Date {
    return this.options.now ? this.options.now() : new Date();
  }

  onApplicationBootstrap(): void {
    this.recover();
    const every = this.options.rescheduleIntervalMs ?? DEFAULT_RESCHEDULE_INTERVAL_MS;
    if (this.enabled && this.taskStartEnabled && every > 0 && !this.timer) {
      this.timer = setInterval(() => this.reschedule(), every);
      this.timer.unref();
    }
  }

  beforeApplicationShutdown(): void {
    // Task loops that end because the server stops must not pull the next queued task.
    this.closing = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Resolves when every task loop launched by this planner has returned (tests use it). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  async submit(submission: PlannerSubmission): Promise<PlannerSubmitResult> {
    if (!this.taskStartEnabled) return { status: 'started' };
    const request = requestOf(submission);
    if (!this.enabled) {
      this.launch({ runId: submission.runId, runDir: submission.runDir, runPrompt: submission.prompt, request }, false);
      return { status: 'started' };
    }
    const runId = submission.runId.trim();
    if (!runId) throw new Error('planner run id is empty');
    const state = this.load();
    const now = this.now();
    const fields = {
      projectId: submission.projectId.trim(),
      taskId: submission.taskId.trim(),
      runDir: submission.runDir.trim(),
      runPrompt: submission.prompt,
      request,
      state: 'queued' as const,
      startedAt: undefined,
    };
    const existing = state.entries.find((e) => e.runId === runId);
    if (existing) {
      Object.assign(existing, fields);
    } else {
      state.entries.push({ runId, submittedAt: now, order: state.nextOrder++, ...fields });
    }
    const launches = this.schedule(state);
    this.save(state);
    this.launchAll(launches);
    const entry = state.entries.find((e) => e.runId === runId);
    if (!entry || entry.state === 'running') return { status: 'started' };
    const queuePosition = this.positions(state).get(runId);
    this.decision('queue', entry, { queue_position: queuePosition, running: state.entries.filter((e) => e.state === 'running').length, limit: this.limit });
    return { status: 'queued', queuePosition };
  }

  /** One server-log line per decision: a root task queued for a slot, started in a free one, or dropped from the queue. */
  private decision(decision: 'queue' | 'start' | 'drop', entry: Pick<PlannerEntry, 'projectId' | 'taskId' | 'runId'>, fields: Record<string, unknown>): void {
    this.logger.log({ msg: 'planner_decision', decision, project_id: entry.projectId, task_id: entry.taskId, run_id: entry.runId, ...fields });
  }

  /** Drops the queued entries of a task (task cancel / delete), then fills free slots. */
  async dropTask(projectId: string, taskId: string): Promise<void> {
    if (!this.enabled) return;
    const state = this.load();
    const dropped = (e: PlannerEntry) => e.state === 'queued' && e.projectId === projectId && e.taskId === taskId;
    for (const entry of state.entries.filter(dropped)) this.decision('drop', entry, { reason: 'task cancelled' });
    state.entries = state.entries.filter((e) => !dropped(e));
    const launches = this.taskStartEnabled ? this.schedule(state) : [];
    this.save(state);
    this.launchAll(launches);
  }

  /** 1-based position of the task's first queued entry among all queued entries. */
  queuePosition(projectId: string, taskId: string): number | undefined {
    return this.snapshot().get(`${projectId}/${taskId}`);
  }

  /** Number of queued entries (metrics / status). */
  queuedCount(): number {
    if (!this.enabled) return 0;
    const state = this.load();
    this.save(state);
    return state.entries.filter((e) => e.state === 'queued').length;
  }

  /** Queue positions of every task with a queued entry, keyed `<project>/<task>`. */
  snapshot(): Map<string, number> {
    const result = new Map<string, number>();
    if (!this.enabled) return result;
    const state = this.load();
    this.save(state);
    const positions = this.positions(state);
    for (const entry of [...state.entries].sort(entryLess)) {
      const key = `${entry.projectId}/${entry.taskId}`;
      const pos = positions.get(entry.runId);
      if (pos !== undefined && !result.has(key)) result.set(key, pos);
    }
    return result;
  }

  /** Server start: re-read the persisted queue and launch queued entries if slots are free. */
  recover(): void {
    if (!this.enabled || !this.taskStartEnabled) return;
    try {
      const persisted = loadPlannerState(this.statePath, this.limit);
      const state = this.load();
      const reclaimed = reclaimInterruptedLoops(persisted, state, this.index.layout, this.bus.systemWriters);
      const launches = this.schedule(state);
      this.save(state);
      if (reclaimed.length > 0) this.logger.log(`recovered planner state: restarting ${reclaimed.length} interrupted task loop(s)`);
      if (launches.length > 0) this.logger.log(`recovered planner state: launching ${launches.length} queued task(s)`);
      for (const entry of reclaimed) this.launch(entry, true, true);
      this.launchAll(launches);
    } catch (err) {
      this.logger.warn(`root task planner recovery failed: ${(err as Error).message}`);
    }
  }

  /** Fills free slots if anything is queued (the periodic check). */
  reschedule(): void {
    if (!this.enabled || !this.taskStartEnabled || this.closing) return;
    try {
      const state = this.load();
      const launches = state.entries.some((e) => e.state === 'queued') ? this.schedule(state) : [];
      this.save(state);
      this.launchAll(launches);
    } catch (err) {
      this.logger.warn(`root task planner reschedule failed: ${(err as Error).message}`);
    }
  }

  private positions(state: PlannerState): Map<string, number> {
    const queued = state.entries.filter((e) => e.state === 'queued').sort(entryLess);
    return new Map(queued.map((e, i) => [e.runId, i + 1]));
  }

  /** State as read from disk (before reconciliation), to skip rewrites that change nothing. */
  private loadedFingerprint = '';

  private fingerprint(state: PlannerState): string {
    return serializePlannerState({ ...state, version: PLANNER_STATE_VERSION, limit: this.limit, updatedAt: undefined });
  }

  private load(): PlannerState {
    const state = loadPlannerState(this.statePath, this.limit);
    this.loadedFingerprint = this.fingerprint(state);
    this.reconcile(state);
    return state;
  }

  private save(state: PlannerState): void {
    if (this.fingerprint(state) === this.loadedFingerprint) return;
    state.version = PLANNER_STATE_VERSION;
    state.limit = this.limit;
    state.updatedAt = this.now();
    savePlannerState(this.statePath, state);
  }

  private readRunStatus(runDir: string): RunInfo | undefined {
    try {
      return readRunInfoReconciled(runInfoFile(runDir));
    } catch {
      return undefined;
    }
  }

  private taskDone(projectId: string, taskId: string): boolean {
    try {
      return isTaskDone(join(this.options.root, projectId, taskId));
    } catch {
      return false;
    }
  }

  /** api.md §6.1 reconciliation: drop malformed, duplicate, done and finished entries. */
  private reconcile(state: PlannerState): void {
    const now = this.now();
    const grace = this.options.unknownGraceMs ?? DEFAULT_UNKNOWN_GRACE_MS;
    if (state.nextOrder <= 0) state.nextOrder = 1;
    const seen = new Set<string>();
    const kept: PlannerEntry[] = [];
    for (const entry of [...state.entries].sort(entryLess)) {
      if (!entry.runId || !entry.projectId || !entry.taskId || !entry.runDir) continue;
      if (seen.has(entry.runId)) continue;
      seen.add(entry.runId);
      if (entry.submittedAt.getTime() === MISSING_TIME.getTime()) entry.submittedAt = now;
      if (entry.order <= 0) entry.order = state.nextOrder++;
      if (entry.state !== 'queued' && entry.state !== 'running') {
        entry.state = 'queued';
        entry.startedAt = undefined;
      }
      const done = this.taskDone(entry.projectId, entry.taskId);
      if (done && entry.state === 'queued') {
        this.decision('drop', entry, { reason: 'task done' });
        continue;
      }
      if (this.activeLoops.has(entry.runId)) {
        // Our own loop is still going (maybe between Ralph attempts): it keeps its slot until
        // it returns, instead of the slot looking free while the next attempt is pending.
        entry.state = 'running';
        kept.push(entry);
        continue;
      }
      const info = this.readRunStatus(entry.runDir);
      if (!info || info.status === 'unknown') {
        if (entry.state === 'running' && (!entry.startedAt || now.getTime() - entry.startedAt.getTime() > grace)) {
          entry.state = 'queued';
          entry.startedAt = undefined;
          if (done) continue;
        }
        kept.push(entry);
        continue;
      }
      if (isRunningRootRun(info)) {
        entry.state = 'running';
        if (!entry.startedAt) entry.startedAt = info.start_time;
        kept.push(entry);
      }
      // a completed or failed first run frees the entry; later attempts count as runs on disk
    }
    state.entries = kept;
    const maxOrder = kept.reduce((m, e) => Math.max(m, e.order), 0);
    if (state.nextOrder <= maxOrder) state.nextOrder = maxOrder + 1;
  }

  /** Running root runs on disk that belong to no running entry (neither its run nor its task). */
  private externalRunningRoots(running: PlannerEntry[]): number {
    const runIds = new Set(running.map((e) => e.runId));
    const tasks = new Set(running.map((e) => `${e.projectId}/${e.taskId}`));
    try {
      return this.index
        .allRunInfos()
        .filter((info) => isRunningRootRun(info) && !runIds.has(info.run_id) && !tasks.has(`${info.project_id}/${info.task_id}`)).length;
    } catch (err) {
      this.logger.warn(`root task planner scan failed: ${(err as Error).message}`);
      return 0;
    }
  }

  /** Promotes the oldest queued entries into free slots; returns the entries to launch. */
  private schedule(state: PlannerState): PlannerEntry[] {
    if (!this.enabled || this.closing || this.launchesPaused?.()) return [];
    const running = state.entries.filter((e) => e.state === 'running');
    let available = this.limit - running.length - this.externalRunningRoots(running);
    const launches: PlannerEntry[] = [];
    const now = this.now();
    for (const entry of state.entries.filter((e) => e.state === 'queued').sort(entryLess)) {
      if (available <= 0) break;
      entry.state = 'running';
      entry.startedAt ??= now;
      launches.push(entry);
      available--;
      this.decision('start', entry, { free_slots: available + 1, limit: this.limit });
    }
    return launches;
  }

  private launchAll(entries: PlannerEntry[]): void {
    for (const entry of entries) this.launch(entry, true);
  }

  private launch(entry: Pick<PlannerEntry, 'runId' | 'runDir' | 'runPrompt' | 'request'>, planned: boolean, adopt = false): void {
    const req = entry.request;
    const task = this.launcher
      .launch({
        projectId: req.project_id,
        taskId: req.task_id,
        runId: entry.runId,
        runDir: entry.runDir,
        prompt: entry.runPrompt,
        agentType: req.agent_type,
        config: req.config,
        projectRoot: req.project_root,
        attachMode: req.attach_mode,
        ...(adopt ? { adopt: true } : {}),
      })
      .catch((err: unknown) => this.logger.error(`task ${req.project_id}/${req.task_id} failed: ${(err as Error).message ?? String(err)}`))
      .then(() => {
        if (!planned) return;
        this.activeLoops.delete(entry.runId);
        this.onLaunchReturned(entry.runId);
      });
    if (planned) this.activeLoops.add(entry.runId);
    this.inFlight.add(task);
    void task.finally(() => this.inFlight.delete(task));
  }

  /** A launched task loop returned: free its slot and start the next queued tasks. */
  private onLaunchReturned(runId: string): void {
    if (this.closing) return;
    try {
      const state = this.load();
      state.entries = state.entries.filter((e) => e.runId !== runId);
      const launches = this.schedule(state);
      this.save(state);
      this.launchAll(launches);
    } catch (err) {
      this.logger.error(`root task planner update failed: ${(err as Error).message}`);
    }
  }
}
