import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { HttpAdapterHost, ModuleRef } from '@nestjs/core';
import * as fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { API_CONTEXT, ApiContext } from '../common/api-context';
import { badRequest, conflict } from '../common/api-error';
import { formatTime } from '../common/go-format';
import { PlannerService } from '@app/planner';
import { LocalTaskLauncher } from '../tasks/task-launcher';
import {
  Candidate,
  CandidateError,
  candidateVersion,
  describeCandidate,
  extractPackage,
  installDependencies,
  packFromRegistry,
  parseCandidate,
} from './candidate-package';
import { handoffArgs, handoffBin, startNewServer } from './handoff';
import { checkReplaceable, findInstallRoot, restore, siblingPath, stamp } from './package-swap';

export type SelfUpdateState = 'idle' | 'deferred' | 'applying' | 'failed';

export interface SelfUpdateOptions {
  /** The package folder to replace (default: the one this file was built into). */
  installRoot?: string;
  /** The dependency step of verification (default: `npm install --omit=dev` when something is missing). */
  installDependencies?: (packageDir: string) => Promise<void>;
  /** How long the new server has to answer /api/v1/health (default 30 s, or $CONDUCTOR_SELF_UPDATE_HANDOFF_TIMEOUT_MS). */
  handoffTimeoutMs?: number;
  /** How often a deferred update re-counts active root runs (default 1 s, as upstream). */
  recheckIntervalMs?: number;
  /** Ends this process once the new server answers (default: process.exit(0)). */
  exit?: () => void;
}

export const SELF_UPDATE_OPTIONS = Symbol('SELF_UPDATE_OPTIONS');

export const DRAIN_MESSAGE = 'self-update drain is in progress; task creation is temporarily unavailable';

/** A failure of one apply step; last_error reads `<step>: <error>`. */
class StepError extends Error {
  constructor(step: string, cause: unknown) {
    super(`${step}: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

async function step<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new StepError(name, err);
  }
}

function loopbackHost(address: string): string {
  if (address === '0.0.0.0' || address === '' || address === '::') return '127.0.0.1';
  return address.includes(':') ? `[${address}]` : address;
}

/**
 * Self-update of the installed npm package (api.md §6.2, redesigned for a Node package): defer while
 * root runs are active, drain task creation, verify → back up → install → hand off to the new
 * server on the same port, and roll back (old package restored, old server listening again) when
 * the new one does not come up.
 */
@Injectable()
export class SelfUpdateService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('self-update');
  private readonly opts: SelfUpdateOptions;
  private state: SelfUpdateState = 'idle';
  private candidate?: Candidate;
  private requestedAt?: Date;
  private startedAt?: Date;
  private finishedAt?: Date;
  private activeAtRequest?: number;
  private lastError?: string;
  private lastNote?: string;
  private worker?: NodeJS.Timeout;
  /** Settles when the running apply ends (tests and shutdown wait on it). */
  applying?: Promise<void>;

  constructor(
    @Inject(API_CONTEXT) private readonly ctx: ApiContext,
    private readonly launcher: LocalTaskLauncher,
    private readonly adapterHost: HttpAdapterHost,
    private readonly moduleRef: ModuleRef,
    @Optional() @Inject(SELF_UPDATE_OPTIONS) opts?: SelfUpdateOptions,
  ) {
    const envTimeout = Number(process.env.CONDUCTOR_SELF_UPDATE_HANDOFF_TIMEOUT_MS);
    this.opts = { handoffTimeoutMs: envTimeout > 0 ? envTimeout : 30_000, recheckIntervalMs: 1000, ...opts };
  }

  get currentState(): SelfUpdateState {
    return this.state;
  }

  /** Root runs on disk with status running and no parent, or the task loops this server runs, whichever is more. */
  countActiveRootRuns(): number {
    const onDisk = this.ctx.index.allRunInfos().filter((i) => i.status === 'running' && !i.parent_run_id).length;
    return Math.max(onDisk, this.launcher.activeLoops);
  }

  status() {
    let activeNow: number;
    let activeError: string | undefined;
    try {
      activeNow = this.countActiveRootRuns();
    } catch (err) {
      activeNow = -1;
      activeError = (err as Error).message;
    }
    const source = this.candidate ? describeCandidate(this.candidate) : undefined;
    return {
      state: this.state,
      package: source,
      binary_path: source,
      requested_at: formatTime(this.requestedAt),
      started_at: formatTime(this.startedAt),
      finished_at: formatTime(this.finishedAt),
      active_runs_at_request: this.activeAtRequest,
      active_runs_now: activeNow,
      active_runs_error: activeError,
      last_error: this.lastError,
      last_note: this.lastNote,
    };
  }

  /** POST /api/v1/admin/self-update: a new candidate (replacing a deferred one, retrying a failed one). */
  request(body: { package?: string; binary_path?: string }) {
    if (this.state === 'applying') throw conflict('self-update is already in progress');
    let candidate: Candidate;
    try {
      candidate = parseCandidate(body);
    } catch (err) {
      if (err instanceof CandidateError) throw badRequest(err.message);
      throw err;
    }
    this.candidate = candidate;
    this.requestedAt = new Date();
    this.startedAt = undefined;
    this.finishedAt = undefined;
    this.lastError = undefined;
    this.lastNote = undefined;
    let active: number;
    try {
      active = this.countActiveRootRuns();
    } catch (err) {
      this.fail(new StepError('count active root runs', err));
      return this.status();
    }
    this.activeAtRequest = active;
    if (active > 0) this.defer(active);
    else this.beginApply();
    return this.status();
  }

  /** The drain: POST /api/v1/tasks is refused while an update is deferred or applying. */
  assertTaskCreationAllowed(): void {
    if (this.draining) throw conflict(DRAIN_MESSAGE, { self_update_state: this.state });
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
    return this.state === 'deferred' || this.state === 'applying';
  }

  onApplicationShutdown(): void {
    this.stopWorker();
  }

  private defer(active: number): void {
    this.state = 'deferred';
    this.lastNote = `waiting for ${active} active root run(s) to finish`;
    if (this.worker) return;
    this.worker = setInterval(() => this.recheck(), this.opts.recheckIntervalMs);
    this.worker.unref();
  }

  private recheck(): void {
    if (this.state !== 'deferred') return this.stopWorker();
    try {
      if (this.countActiveRootRuns() === 0) this.beginApply();
    } catch (err) {
      this.stopWorker();
      this.fail(new StepError('count active root runs', err));
    }
  }

  private stopWorker(): void {
    if (this.worker) clearInterval(this.worker);
    this.worker = undefined;
  }

  private beginApply(): void {
    this.stopWorker();
    this.state = 'applying';
    this.startedAt = new Date();
    this.lastNote = undefined;
    const candidate = this.candidate!;
    // after the current request has been answered
    this.applying = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.apply(candidate));
  }

  private fail(err: unknown): void {
    this.state = 'failed';
    this.finishedAt = new Date();
    this.lastError = err instanceof Error ? err.message : String(err);
    this.logger.warn(`self-update failed: ${this.lastError}`);
  }

  private async apply(candidate: Candidate): Promise<void> {
    let staging: string | undefined;
    try {
      const root = await step('resolve install root', () => {
        const dir = this.opts.installRoot ?? findInstallRoot(__dirname);
        checkReplaceable(dir);
        return dir;
      });
      staging = siblingPath(root, `update-${stamp()}.tmp`);
      const stagingDir = staging;
      const { dir, version } = await step('verify candidate package', async () => {
        fs.mkdirSync(stagingDir, { recursive: true });
        const tarball = candidate.kind === 'tarball' ? candidate.path : await packFromRegistry(candidate.spec, stagingDir);
        const dir = await extractPackage(tarball, path.join(stagingDir, 'extract'));
        await (this.opts.installDependencies ?? installDependencies)(dir);
        return { dir, version: await candidateVersion(dir) };
      });
      const backup = siblingPath(root, `rollback-${stamp()}`);
      await step('back up current package', () => fs.renameSync(root, backup));
      await step('install candidate package', () => {
        try {
          fs.renameSync(dir, root);
        } catch (err) {
          fs.renameSync(backup, root);
          throw err;
        }
      });
      this.logger.log(`installed ${version} into ${root}; previous package kept at ${backup}`);
      await step('handoff to updated package', () => this.handoff(root, backup, version));
    } catch (err) {
      this.fail(err);
    } finally {
      if (staging) fs.rmSync(staging, { recursive: true, force: true });
    }
  }

  /** Closes our listener, starts the new server on the same port, and exits once it is healthy. */
  private async handoff(root: string, backup: string, version: string): Promise<void> {
    const server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    const address = server.address() as AddressInfo | null;
    if (!address || typeof address !== 'object') throw new Error('this server is not listening on a TCP port');
    await new Promise<void>((resolve) => {
      server.close();
      // the listening socket is released at once; open connections (SSE) end when we exit
      server.closeIdleConnections?.();
      setImmediate(resolve);
    });
    const { args, env } = handoffArgs(process.argv.slice(2), process.env, address.port);
    try {
      const started = await startNewServer({
        bin: handoffBin(root),
        args,
        env,
        cwd: process.cwd(),
        healthUrl: `http://${loopbackHost(address.address)}:${address.port}/api/v1/health`,
        timeoutMs: this.opts.handoffTimeoutMs!,
      });
      this.state = 'idle';
      this.finishedAt = new Date();
      this.lastNote = `handed off to ${version} (pid ${started.pid})`;
      this.logger.log(`${this.lastNote}; exiting`);
      setTimeout(this.opts.exit ?? (() => process.exit(0)), 100);
    } catch (err) {
      const problems = [(err as Error).message];
      try {
        const rejected = restore(root, backup);
        problems.push(`rolled back (rejected package kept at ${rejected})`);
      } catch (restoreErr) {
        problems.push(`rollback failed: ${(restoreErr as Error).message}`);
      }
      try {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(address.port, address.address, () => {
            server.off('error', reject);
            resolve();
          });
        });
      } catch (listenErr) {
        problems.push(`old server could not listen again: ${(listenErr as Error).message}`);
      }
      throw new Error(problems.join('; '));
    }
  }
}
