import { rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { rotateBus } from '@app/messagebus';
import {
  createLivenessProbe,
  folderSize,
  isTaskDone,
  listFolderNames,
  LivenessProbe,
  PROJECT_BUS_FILE,
  readRunInfo,
  readRunInfoReconciled,
  runInfoFile,
  RunsLayout,
  TASK_BUS_FILE,
  taskRunsDir,
  type RunInfo,
  existingProjectDir,
} from '@app/storage';

/**
 * The `run-agent gc` use case (cli-storage.md §1.13): delete old finished run folders, optionally
 * rotate large message buses and remove finished empty tasks. The command only parses flags.
 */

export interface GcSettings {
  cutoff: Date;
  dryRun: boolean;
  keepFailed: boolean;
  rotateBus: boolean;
  busMaxBytes: number;
  deleteDoneTasks: boolean;
  /** Progress lines (stdout in text mode, nothing in JSON mode). */
  log: (line: string) => void;
  warn: (line: string) => void;
}

export interface GcDeletedRun {
  run_dir: string;
  project_id: string;
  task_id: string;
  run_id: string;
  status: string;
  /** The stored status was "running" but its process is gone. */
  stale: boolean;
  started: string;
  size_bytes: number;
}

export interface GcReport {
  dry_run: boolean;
  cutoff: string;
  deleted_runs: GcDeletedRun[];
  freed_bytes: number;
  deleted_tasks: string[];
  rotated_buses: { path: string; size_bytes: number; archived_path?: string }[];
  warnings: string[];
}

const ZERO_TIME_MS = Date.UTC(1, 0, 1);
const MIB = 1024 * 1024;

/** `10MB`, `100KB`, `1GB`, `512B`, `2048` (1024-based; leading integer only; negative → error). */
export function parseSizeBytes(text: string): number {
  const value = text.trim();
  if (value === '') throw new Error('empty size string');
  const m = /^(.*?)(GB|MB|KB|B)?$/i.exec(value) as RegExpExecArray;
  const multiplier = { GB: 1024 ** 3, MB: MIB, KB: 1024, B: 1 }[(m[2] ?? 'B').toUpperCase() as 'GB' | 'MB' | 'KB' | 'B'];
  const num = /^\s*([+-]?\d+)/.exec(m[1]);
  if (!num) throw new Error(`cannot parse number from ${JSON.stringify(value)}`);
  const n = Number(num[1]);
  if (n < 0) throw new Error('size must be non-negative');
  return n * multiplier;
}

const mb = (bytes: number): string => (bytes / MIB).toFixed(1);

/**
 * The status gc acts on. A "running" run whose process (and group) is gone is treated as the
 * reconciling reader would record it, so gc can collect it (upstream never does).
 */
function effectiveStatus(info: RunInfo, taskDir: string, probe: LivenessProbe): { status: string; stale: boolean } {
  if (info.status !== 'running' || (info.pid <= 0 && info.pgid <= 0) || probe.isRunAlive(info)) return { status: info.status, stale: false };
  let done = false;
  try {
    done = isTaskDone(taskDir);
  } catch {
    done = false;
  }
  return { status: done ? 'completed' : 'failed', stale: true };
}

function runAgeTime(info: RunInfo): number {
  const start = info.start_time?.getTime() ?? ZERO_TIME_MS;
  if (start > ZERO_TIME_MS) return start;
  const end = info.end_time?.getTime() ?? ZERO_TIME_MS;
  return end > ZERO_TIME_MS ? end : 0;
}

function rotateIfLarge(path: string, s: GcSettings, report: GcReport): void {
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) return;
    size = st.size;
  } catch {
    return;
  }
  if (size <= s.busMaxBytes) return;
  if (s.dryRun) {
    s.log(`[dry-run] would rotate ${basename(path)} (${mb(size)} MB → archived)`);
    report.rotated_buses.push({ path, size_bytes: size });
    return;
  }
  try {
    const archived = rotateBus(path);
    if (!archived) return;
    s.log(`Rotated ${basename(path)} (${mb(size)} MB → archived)`);
    report.rotated_buses.push({ path, size_bytes: size, archived_path: archived });
  } catch (err) {
    warn(s, report, `rotate ${path}: ${(err as Error).message}`);
  }
}

function warn(s: GcSettings, report: GcReport, message: string): void {
  report.warnings.push(message);
  s.warn(`warning: ${message}`);
}

function gcTask(layout: RunsLayout, project: string, task: string, s: GcSettings, probe: LivenessProbe, report: GcReport): void {
  const taskDir = layout.taskDir(project, task);
  if (s.rotateBus) rotateIfLarge(join(taskDir, TASK_BUS_FILE), s, report);
  const runsDir = taskRunsDir(taskDir);
  const runs = listFolderNames(runsDir) ?? [];
  let remaining = 0;
  for (const run of runs) {
    const runDir = join(runsDir, run);
    const infoPath = runInfoFile(runDir);
    let info: RunInfo;
    try {
      info = readRunInfo(infoPath);
    } catch (err) {
      remaining++;
      if ((err as { code?: string }).code === 'NOT_FOUND') s.warn(`warning: skipping orphaned run dir ${run} (no run-info.yaml)`);
      else warn(s, report, `skip ${runDir}: read run-info: ${(err as Error).message}`);
      continue;
    }
    const { status, stale } = effectiveStatus(info, taskDir, probe);
    const age = runAgeTime(info);
    const collectable =
      (status === 'completed' || status === 'failed') && !(s.keepFailed && status === 'failed') && age > 0 && age < s.cutoff.getTime();
    if (!collectable) {
      remaining++;
      if (stale && !s.dryRun) {
        try {
          readRunInfoReconciled(infoPath, probe); // records the dead process, like list/status would
        } catch {
          // best effort
        }
      }
      continue;
    }
    const size = folderSize(runDir);
    const started = info.start_time.toISOString().slice(0, 19).replace('T', ' ');
    const detail = `(status=${status}${stale ? ' (stale running)' : ''}, started=${started}, size=${mb(size)} MB)`;
    if (s.dryRun) {
      s.log(`[dry-run] would delete ${runDir} ${detail}`);
    } else {
      s.log(`deleting ${runDir} ${detail}`);
      try {
        rmSync(runDir, { recursive: true, force: true });
      } catch (err) {
        remaining++;
        warn(s, report, `delete ${runDir}: ${(err as Error).message}`);
        continue;
      }
    }
    report.deleted_runs.push({ run_dir: runDir, project_id: project, task_id: task, run_id: run, status, stale, started, size_bytes: size });
    report.freed_bytes += size;
  }
  if (s.deleteDoneTasks && remaining === 0) gcDoneTask(taskDir, s, report);
}

/** A task with DONE, no run folders left and an old enough folder mtime is removed. */
function gcDoneTask(taskDir: string, s: GcSettings, report: GcReport): void {
  try {
    if (!isTaskDone(taskDir)) return;
    if (statSync(taskDir).mtime.getTime() >= s.cutoff.getTime()) return;
  } catch (err) {
    warn(s, report, `${taskDir}: ${(err as Error).message}`);
    return;
  }
  if (s.dryRun) {
    s.log(`[dry-run] would delete task dir ${basename(taskDir)} (DONE + empty)`);
  } else {
    s.log(`deleting task dir ${basename(taskDir)} (DONE + empty)`);
    try {
      rmSync(taskDir, { recursive: true, force: true });
    } catch (err) {
      warn(s, report, `delete task dir ${taskDir}: ${(err as Error).message}`);
      return;
    }
  }
  report.deleted_tasks.push(taskDir);
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The projects gc walks: the one named (it must exist) or every project folder of the root. */
export function gcProjects(layout: RunsLayout, project?: string): string[] {
  if (project?.trim()) {
    existingProjectDir(layout, project.trim());
    return [project.trim()];
  }
  if (!isDir(layout.root)) throw new Error(`root directory not found: ${layout.root}`);
  return listFolderNames(layout.root) ?? [];
}

export function runGc(layout: RunsLayout, projects: string[], s: GcSettings, probe: LivenessProbe = createLivenessProbe()): GcReport {
  const report: GcReport = {
    dry_run: s.dryRun,
    cutoff: s.cutoff.toISOString(),
    deleted_runs: [],
    freed_bytes: 0,
    deleted_tasks: [],
    rotated_buses: [],
    warnings: [],
  };
  for (const project of projects) {
    let projectDir: string;
    try {
      projectDir = layout.projectDir(project);
    } catch (err) {
      warn(s, report, `skip project folder ${JSON.stringify(project)}: ${(err as Error).message}`);
      continue;
    }
    if (s.rotateBus) rotateIfLarge(join(projectDir, PROJECT_BUS_FILE), s, report);
    for (const task of listFolderNames(projectDir) ?? []) {
      try {
        gcTask(layout, project, task, s, probe, report);
      } catch (err) {
        warn(s, report, `skip task ${join(projectDir, task)}: ${(err as Error).message}`);
      }
    }
  }
  return report;
}

export function gcSummary(report: GcReport): string {
  const action = report.dry_run ? 'Would delete' : 'Deleted';
  let out = `${action} ${report.deleted_runs.length} runs, freed ${mb(report.freed_bytes)} MB\n`;
  if (report.deleted_tasks.length) out += `${action} ${report.deleted_tasks.length} task directories (DONE + empty runs)\n`;
  if (report.rotated_buses.length) out += `${report.dry_run ? 'Would rotate' : 'Rotated'} ${report.rotated_buses.length} message bus file(s)\n`;
  return out;
}
