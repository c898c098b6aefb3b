import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BusWriters } from '@app/messagebus';
import { readWorktreeRecord, WorktreeRecord } from './record';
import { TASK_BUS_FILE } from '@app/storage';

/** Two declared paths overlap when one is the other or contains it (`src` overlaps `src/a.ts`). */
export function pathsOverlap(a: string[], b: string[]): string[] {
  const hits: string[] = [];
  for (const x of a) {
    for (const y of b) {
      if (x === y || y.startsWith(`${x}/`) || x.startsWith(`${y}/`)) hits.push(x === y ? x : `${x} ↔ ${y}`);
    }
  }
  return hits;
}

/** Unmerged sibling tasks of the same project and repository whose declared paths overlap `rec.paths`. */
export function overlappingSiblings(projectDir: string, rec: WorktreeRecord): { taskId: string; paths: string[] }[] {
  if (!rec.paths.length) return [];
  let names: string[];
  try {
    names = readdirSync(projectDir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return [];
  }
  const out: { taskId: string; paths: string[] }[] = [];
  for (const name of names.sort()) {
    if (name === rec.task_id) continue;
    let other: WorktreeRecord | undefined;
    try {
      other = readWorktreeRecord(join(projectDir, name));
    } catch {
      continue;
    }
    if (!other || other.repo !== rec.repo || other.merge_status === 'merged' || other.removed_at) continue;
    const hits = pathsOverlap(rec.paths, other.paths);
    if (hits.length) out.push({ taskId: name, paths: hits });
  }
  return out;
}

/** Posts a WARNING on the new task's bus and on each overlapping sibling's bus. */
export async function warnOverlaps(projectDir: string, rec: WorktreeRecord, writers: BusWriters): Promise<number> {
  const siblings = overlappingSiblings(projectDir, rec);
  for (const s of siblings) {
    const body = (other: string): string =>
      `worktree paths overlap with task ${other}: ${s.paths.join(', ')}; expect merge conflicts (merge one, then rebase the other)`;
    for (const [task, other] of [[rec.task_id, s.taskId], [s.taskId, rec.task_id]]) {
      const bus = writers(join(projectDir, task, TASK_BUS_FILE));
      try {
        await bus.append({ type: 'WARNING', project_id: rec.project_id, task_id: task, run_id: '', body: body(other), meta: { kind: 'worktree_overlap' } });
      } finally {
        bus.close();
      }
    }
  }
  return siblings.length;
}
