import * as fs from 'node:fs';
import { folderSize } from '@app/storage';
import { isZeroTime } from '../common/go-format';
import { confine } from '../security/path-confinement';
import type { ProjectDataService } from './project-data.service';

/*
 * Deleting folders behind the project routes: each path is confined to the runs root first (403).
 * The reads (stats, served files) are in libs/runner/src/api-views/project-files.ts.
 */

/** Removes a project folder; returns how many task folders and bytes went with it. */
export function deleteProjectFolder(data: ProjectDataService, dir: string): { deletedTasks: number; freed: number } {
  const deletedTasks = fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory() && /^task-\d{8}-\d{6}-.+/.test(e.name)).length;
  const freed = folderSize(dir);
  confine(data.root, dir, 'project path');
  fs.rmSync(dir, { recursive: true, force: true });
  return { deletedTasks, freed };
}

/** `POST /api/projects/:p/gc`: finished runs that started before the cutoff (upstream's rule). */
export function gcProjectRuns(data: ProjectDataService, id: string, opts: { cutoffMs: number; dryRun: boolean; keepFailed: boolean }): { deleted: number; freed: number } {
  let deleted = 0;
  let freed = 0;
  for (const r of data.runs(id)) {
    const s = r.info.status;
    if (s !== 'completed' && !(s === 'failed' && !opts.keepFailed)) continue;
    const ref = isZeroTime(r.info.start_time) ? r.info.end_time : r.info.start_time;
    if (isZeroTime(ref) || ref.getTime() >= opts.cutoffMs) continue;
    deleted++;
    freed += folderSize(r.dir);
    if (!opts.dryRun) {
      confine(data.root, r.dir, 'run path');
      fs.rmSync(r.dir, { recursive: true, force: true });
    }
  }
  return { deleted, freed };
}

/** Deletes a task or run folder that lies inside the runs root. */
export function removeFolder(data: ProjectDataService, dir: string, what: string): void {
  confine(data.root, dir, what);
  fs.rmSync(dir, { recursive: true, force: true });
}
