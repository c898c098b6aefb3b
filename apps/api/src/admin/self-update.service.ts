import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { HttpAdapterHost, ModuleRef } from '@nestjs/core';
import type { Server } from 'node:http';
import { PlannerService } from '@app/planner';
import { DRAIN_MESSAGE, SelfUpdateError, SelfUpdateOptions, SelfUpdater, SelfUpdateState } from '@app/self-update';
import { API_CONTEXT, ApiContext } from '../common/api-context';
import { badRequest, conflict } from '../common/api-error';
import { formatTime } from '../common/go-format';
import { LocalTaskLauncher } from '../tasks/task-launcher';

export { DRAIN_MESSAGE, type SelfUpdateOptions, type SelfUpdateState };

export const SELF_UPDATE_OPTIONS = Symbol('SELF_UPDATE_OPTIONS');

/**
 * The server's side of self-update (the work is @app/self-update's SelfUpdater): counts active root
 * runs, hands it the HTTP server, answers in the API's wire form, refuses task creation while it
 * drains and pauses the root-task planner meanwhile.
 */
@Injectable()
export class SelfUpdateService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('self-update');
  private readonly updater: SelfUpdater;

  constructor(
    @Inject(API_CONTEXT) private readonly ctx: ApiContext,
    private readonly launcher: LocalTaskLauncher,
    private readonly adapterHost: HttpAdapterHost,
    private readonly moduleRef: ModuleRef,
    @Optional() @Inject(SELF_UPDATE_OPTIONS) opts?: SelfUpdateOptions,
  ) {
    this.updater = new SelfUpdater(
      {
        countActiveRootRuns: () => this.countActiveRootRuns(),
        httpServer: () => this.adapterHost.httpAdapter.getHttpServer() as Server,
        log: (message) => this.logger.log(message),
        warn: (message) => this.logger.warn(message),
      },
      opts,
    );
  }

  get currentState(): SelfUpdateState {
    return this.updater.currentState;
  }

  /** Settles when the running apply ends (tests and shutdown wait on it). */
  get applying(): Promise<void> | undefined {
    return this.updater.applying;
  }

  /** Root runs on disk with status running and no parent, or the task loops this server runs, whichever is more. */
  countActiveRootRuns(): number {
    const onDisk = this.ctx.index.allRunInfos().filter((i) => i.status === 'running' && !i.parent_run_id).length;
    return Math.max(onDisk, this.launcher.activeLoops);
  }

  status() {
    const s = this.updater.snapshot();
    return {
      state: s.state,
      package: s.package,
      binary_path: s.package,
      requested_at: formatTime(s.requestedAt),
      started_at: formatTime(s.startedAt),
      finished_at: formatTime(s.finishedAt),
      active_runs_at_request: s.activeRunsAtRequest,
      active_runs_now: s.activeRunsNow,
      active_runs_error: s.activeRunsError,
      last_error: s.lastError,
      last_note: s.lastNote,
    };
  }

  /** POST /api/v1/admin/self-update: a new candidate (replacing a deferred one, retrying a failed one). */
  request(body: { package?: string; binary_path?: string }) {
    try {
      this.updater.request(body);
    } catch (err) {
      if (err instanceof SelfUpdateError) throw err.code === 'CONFLICT' ? conflict(err.message) : badRequest(err.message);
      throw err;
    }
    return this.status();
  }

  /** The drain: POST /api/v1/tasks is refused while an update is deferred or applying. */
  assertTaskCreationAllowed(): void {
    if (this.draining) throw conflict(DRAIN_MESSAGE, { self_update_state: this.updater.currentState });
  }

  /** While draining, the root-task planner does not start queued entries either. */
  onApplicationBootstrap(): void {
    let planner: PlannerService;
    try {
      planner = this.moduleRef.get(PlannerService, { strict: false });
    } catch {
      return; // no planner in this application
    }
    planner.launchesPaused = () => this.draining;
  }

  get draining(): boolean {
    return this.updater.draining;
  }

  onApplicationShutdown(): void {
    this.updater.stop();
  }
}
