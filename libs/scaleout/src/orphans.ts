import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { stopRun } from '@app/runner';
import { readRunInfoIfExists, runInfoFile, taskRunsDir } from '@app/storage';

const dirs = (d: string) => (existsSync(d) ? readdirSync(d, { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name) : []);

/**
 * A worker starting on a runs root that a killed worker process of this host left behind: the
 * runs still `running` there have no runner any more (their tasks went back to the queue and
 * continue from the replicated state, here or on another host), so their agents are stopped and
 * the runs finalised locally. Nothing is published now (the task is not this worker's); should it
 * take the task over later, its takeover publishes these files (ChangeTailer.adopt).
 * Returns the `<project>/<task>` keys of the tasks it released.
 */
export async function reconcileOrphans(root: string, host: string, graceMs = 5000): Promise<string[]> {
  const released = new Set<string>();
  for (const p of dirs(root)) {
    for (const t of dirs(join(root, p)).filter((n) => n.startsWith('task-'))) {
      const runs = taskRunsDir(join(root, p, t));
      for (const r of dirs(runs)) {
        const info = readRunInfoIfExists(runInfoFile(join(runs, r)));
        if (info?.status !== 'running' || info.process_ownership === 'external') continue;
        await stopRun(join(runs, r), { graceMs, stoppedBy: `worker ${host} restarted: the task continues from the queue` }).catch(() => undefined);
        released.add(`${p}/${t}`);
      }
    }
  }
  return [...released];
}
