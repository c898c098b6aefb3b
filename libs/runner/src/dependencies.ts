import { blockedBy, hasDoneFile } from '@app/storage';
import { sleep } from './sleep';

export interface DependencyWaitOptions {
  root: string;
  projectId: string;
  taskDir: string;
  deps: string[];
  pollMs: number;
  signal?: AbortSignal;
  post(type: string, body: string): Promise<void>;
  /** Ends the wait early (e.g. a stop marker appeared). */
  shouldStop?(): boolean;
}

/**
 * Blocks until every dependency is ready (runner-agents.md §3.5): PROGRESS when the blocked set
 * changes, FACT when released after having been blocked. Sleeps between checks (no busy wait).
 */
export async function waitForDependencies(opts: DependencyWaitOptions): Promise<'ready' | 'done' | 'stopped'> {
  if (opts.deps.length === 0) return 'ready';
  let lastBlocked: string | undefined;
  for (;;) {
    if (hasDoneFile(opts.taskDir)) return 'done';
    if (opts.shouldStop?.()) return 'stopped';
    const blocked = blockedBy(opts.root, opts.projectId, opts.deps);
    if (blocked.length === 0) {
      if (lastBlocked !== undefined) await opts.post('FACT', 'dependencies satisfied; starting task');
      return 'ready';
    }
    const joined = blocked.join(', ');
    if (joined !== lastBlocked) {
      await opts.post('PROGRESS', `task blocked by dependencies: ${joined}`);
      lastBlocked = joined;
    }
    if (!(await sleep(opts.pollMs, opts.signal))) return 'stopped';
  }
}
