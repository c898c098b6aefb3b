import type { ChangeFeed, RunsLayout, StorageIndex } from '@app/storage';
import type { RunRef } from './run-log-hub';
import type { SseSettings } from './settings';

/** What RunDiscovery reads of the server's context (read on each use: CoreModule fills in `index`). */
export interface RunDiscoveryContext {
  index: Pick<StorageIndex, 'listProjects' | 'listTasks' | 'listRuns'>;
  layout: Pick<RunsLayout, 'runDir'>;
  sse: Pick<SseSettings, 'pollIntervalMs' | 'discoveryIntervalMs'>;
}

export type DiscoveryListener = (runs: RunRef[]) => void;

/**
 * Finds new run directories for the fan-in streams. One shared timer for the whole server (not one
 * walk per connection): it lists projects/tasks/runs through the StorageIndex, whose listings are
 * cached by directory mtime, so an idle tick costs a few stat calls. Provided by the server
 * (apps/api/src/sse/streams.providers.ts).
 */
export class RunDiscovery {
  private readonly listeners = new Set<DiscoveryListener>();
  private known = new Set<string>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly ctx: RunDiscoveryContext,
    private readonly feed: ChangeFeed,
  ) {}

  /** Extra wake-up: a ChangeFeed watch on a folder whose new entries are runs (a task's runs/). */
  watchFolder(path: string): () => void {
    return this.feed.watch(path, () => this.tick(), { pollMs: this.ctx.sse.pollIntervalMs });
  }

  /** Every run currently on disk (direct layout). */
  listAll(): RunRef[] {
    const { index, layout } = this.ctx;
    const out: RunRef[] = [];
    for (const p of safe(() => index.listProjects())) {
      for (const t of safe(() => index.listTasks(p))) {
        for (const r of safe(() => index.listRuns(p, t))) out.push({ runId: r, projectId: p, taskId: t, runDir: layout.runDir(p, t, r) });
      }
    }
    return out;
  }

  listTask(projectId: string, taskId: string): RunRef[] {
    const { index, layout } = this.ctx;
    return safe(() => index.listRuns(projectId, taskId)).map((r) => ({ runId: r, projectId, taskId, runDir: layout.runDir(projectId, taskId, r) }));
  }

  subscribe(listener: DiscoveryListener): () => void {
    if (this.listeners.size === 0) {
      this.known = new Set(this.listAll().map((r) => r.runId));
      this.timer = setInterval(() => this.tick(), this.ctx.sse.discoveryIntervalMs);
      this.timer.unref();
    }
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  tick(): void {
    const all = this.listAll();
    const fresh = all.filter((r) => !this.known.has(r.runId));
    if (fresh.length === 0) return;
    for (const r of fresh) this.known.add(r.runId);
    for (const l of [...this.listeners]) l(fresh);
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
    this.listeners.clear();
  }
}

function safe<T>(fn: () => T[]): T[] {
  try {
    return fn();
  } catch {
    return [];
  }
}
