import * as fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { Candidate, CandidateError, candidateVersion, describeCandidate, extractPackage, installDependencies, packFromRegistry, parseCandidate } from './candidate-package';
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

/** What the updater needs from the server it runs in. */
export interface SelfUpdateHost {
  /** Root runs active now (the drain waits for 0); may throw. */
  countActiveRootRuns(): number;
  /** The server's listening HTTP server (closed for the handoff, re-opened on rollback). */
  httpServer(): Server;
  log(message: string): void;
  warn(message: string): void;
}

export const DRAIN_MESSAGE = 'self-update drain is in progress; task creation is temporarily unavailable';

/** A refused request: `INVALID_INPUT` (a bad candidate, HTTP 400) or `CONFLICT` (an update is applying, HTTP 409). */
export class SelfUpdateError extends Error {
  constructor(
    readonly code: 'INVALID_INPUT' | 'CONFLICT',
    message: string,
  ) {
    super(message);
  }
}

/** The updater's state as GET /api/v1/admin/self-update shows it (times unformatted). */
export interface SelfUpdateSnapshot {
  state: SelfUpdateState;
  package?: string;
  requestedAt?: Date;
  startedAt?: Date;
  finishedAt?: Date;
  activeRunsAtRequest?: number;
  activeRunsNow: number;
  activeRunsError?: string;
  lastError?: string;
  lastNote?: string;
}

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
 * the new one does not come up. The API's SelfUpdateService wires it to the server.
 */
export class SelfUpdater {
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
    private readonly host: SelfUpdateHost,
    opts?: SelfUpdateOptions,
  ) {
    const envTimeout = Number(process.env.CONDUCTOR_SELF_UPDATE_HANDOFF_TIMEOUT_MS);
    this.opts = { handoffTimeoutMs: envTimeout > 0 ? envTimeout : 30_000, recheckIntervalMs: 1000, ...opts };
  }

  get currentState(): SelfUpdateState {
    return this.state;
  }

  get draining(): boolean {
    return this.state === 'deferred' || this.state === 'applying';
  }

  snapshot(): SelfUpdateSnapshot {
    let activeNow: number;
    let activeError: string | undefined;
    try {
      activeNow = this.host.countActiveRootRuns();
    } catch (err) {
      activeNow = -1;
      activeError = (err as Error).message;
    }
    return {
      state: this.state,
      package: this.candidate ? describeCandidate(this.candidate) : undefined,
      requestedAt: this.requestedAt,
      startedAt: this.startedAt,
      finishedAt: this.finishedAt,
      activeRunsAtRequest: this.activeAtRequest,
      activeRunsNow: activeNow,
      activeRunsError: activeError,
      lastError: this.lastError,
      lastNote: this.lastNote,
    };
  }

  /** A new candidate (replacing a deferred one, retrying a failed one). */
  request(body: { package?: string; binary_path?: string }): void {
    if (this.state === 'applying') throw new SelfUpdateError('CONFLICT', 'self-update is already in progress');
    let candidate: Candidate;
    try {
      candidate = parseCandidate(body);
    } catch (err) {
      if (err instanceof CandidateError) throw new SelfUpdateError('INVALID_INPUT', err.message);
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
      active = this.host.countActiveRootRuns();
    } catch (err) {
      this.fail(new StepError('count active root runs', err));
      return;
    }
    this.activeAtRequest = active;
    if (active > 0) this.defer(active);
    else this.beginApply();
  }

  stop(): void {
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
      if (this.host.countActiveRootRuns() === 0) this.beginApply();
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
    this.host.warn(`self-update failed: ${this.lastError}`);
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
      this.host.log(`installed ${version} into ${root}; previous package kept at ${backup}`);
      await step('handoff to updated package', () => this.handoff(root, backup, version));
    } catch (err) {
      this.fail(err);
    } finally {
      if (staging) fs.rmSync(staging, { recursive: true, force: true });
    }
  }

  /** Closes our listener, starts the new server on the same port, and exits once it is healthy. */
  private async handoff(root: string, backup: string, version: string): Promise<void> {
    const server = this.host.httpServer();
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
      this.host.log(`${this.lastNote}; exiting`);
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
