import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FileContent, ProjectStats } from '@app/contracts';
import { formatTime, MAX_SERVED_FILE_BYTES, readRecordText, readRegularFileCapped, TASK_ID_PATTERN, taskRunsDir } from '@app/storage';
import type { RunRecord } from './shapes';
import { GENERIC_BUS_FILE } from '@app/messagebus';

/*
 * The filesystem reads behind the project routes (project folders, stats, served files), so the
 * server's controllers only validate input and map results to HTTP. Deleting folders stays in
 * apps/api/src/projects/project-files.ts (it checks the path against the runs root first).
 */

/** The file in a project folder that names the project's working root. */
export const PROJECT_ROOT_MARKER = 'PROJECT-ROOT.txt';

function safeReaddir(d: string): fs.Dirent[] {
  try {
    return fs.readdirSync(d, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** `stat` of a proposed project root: 'missing', 'not-dir' or 'ok'. */
export function checkProjectRoot(root: string): 'missing' | 'not-dir' | 'ok' {
  let st: fs.Stats;
  try {
    st = fs.statSync(root);
  } catch {
    return 'missing';
  }
  return st.isDirectory() ? 'ok' : 'not-dir';
}

/** Creates the project folder with its PROJECT-ROOT.txt marker. */
export function createProjectFolder(dir: string, root: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, PROJECT_ROOT_MARKER), `${root}\n`);
}

/** `GET /api/projects/:p/stats` of an existing project folder. */
export function projectStats(id: string, dir: string, runs: RunRecord[]): ProjectStats {
  const stats: ProjectStats = { project_id: id, total_tasks: 0, total_runs: 0, running_runs: 0, completed_runs: 0, failed_runs: 0, crashed_runs: 0, message_bus_files: 0, message_bus_total_bytes: 0 };
  const countBus = (d: string) => {
    for (const e of safeReaddir(d)) {
      if (e.isFile() && e.name.endsWith(GENERIC_BUS_FILE)) {
        stats.message_bus_files++;
        stats.message_bus_total_bytes += fs.statSync(path.join(d, e.name)).size;
      }
    }
  };
  countBus(dir);
  for (const e of safeReaddir(dir)) {
    if (!e.isDirectory()) continue;
    if (TASK_ID_PATTERN.test(e.name)) stats.total_tasks++;
    countBus(path.join(dir, e.name));
    stats.total_runs += safeReaddir(taskRunsDir(path.join(dir, e.name))).filter((x) => x.isDirectory()).length;
  }
  for (const r of runs) {
    if (r.info.status === 'running') stats.running_runs++;
    else if (r.info.status === 'completed') stats.completed_runs++;
    else if (r.info.status === 'failed') stats.failed_runs++;
    else stats.crashed_runs++;
  }
  return stats;
}

/** Size of a file in bytes; 0 when unset or gone. */
export function fileSizeOf(p: string | undefined): number {
  if (!p) return 0;
  try {
    return fs.statSync(p, { throwIfNoEntry: false })?.size ?? 0;
  } catch {
    return 0;
  }
}

/** Tail of a text: the last `n` lines (D12 `tail=`). */
export function lastTextLines(text: string, n: number): string {
  const lines = text.split('\n');
  const trailing = text.endsWith('\n');
  if (trailing) lines.pop();
  const kept = lines.slice(-n).join('\n');
  return trailing && kept !== '' ? `${kept}\n` : kept;
}

/**
 * A task or run file as the API returns it (last `tail` lines when > 0); undefined when it does not
 * exist. Only a regular file whose real path lies inside `root` is read (403 otherwise), and at most
 * MAX_SERVED_FILE_BYTES of it: a longer file is served from its last bytes with `truncated: true`.
 */
export function readFileContent(root: string, file: string, name: string, tail?: number): (FileContent & { truncated?: true }) | undefined {
  const read = readRegularFileCapped(file, { root, maxBytes: MAX_SERVED_FILE_BYTES });
  if (!read) return undefined;
  let content = read.text;
  if (tail !== undefined && tail > 0) content = lastTextLines(content, tail);
  const out: FileContent & { truncated?: true } = { name, content, modified: formatTime(read.stat.mtime), size_bytes: read.stat.size };
  if (read.truncated) out.truncated = true;
  return out;
}

/** The raw text of a record file (`GET /api/v1/runs/:r/info` serves run-info.yaml as stored); undefined when missing or not a regular file. */
export function readRawText(file: string): string | undefined {
  try {
    return readRecordText(file);
  } catch {
    return undefined;
  }
}

/**
 * GET /api/projects/home-dirs: the working directories runs used (outside the runs root), then the
 * projects' roots, sorted, at most `limit` (read lazily: stops once full).
 */
export function homeDirsOf(runCwds: Iterable<string | undefined>, projectRoots: Iterable<string | undefined>, insideRunsRoot: (dir: string) => boolean, limit = 20): string[] {
  const dirs = new Set<string>();
  for (const cwd of runCwds) {
    if (dirs.size >= limit) break;
    if (cwd && !insideRunsRoot(cwd)) dirs.add(cwd);
  }
  for (const root of projectRoots) {
    if (dirs.size >= limit) break;
    if (root) dirs.add(root);
  }
  return [...dirs].sort();
}
