import { Inject } from '@nestjs/common';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Command, CommandRunner, Option } from 'nest-commander';
import { rotateBus } from '@app/messagebus';
import { formatGoDuration } from '@app/runner';
import { gcTaskWorktrees } from './support/worktree-gc';
import { isTaskDone, LIVENESS_PROBE, LivenessProbe, readRunInfo, readRunInfoReconciled, RunsLayout, type RunInfo } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { durationFlag } from './support/options';
import { resolveRoot } from './support/runs-root';
import { listRunNames } from './support/task-state';
import { utcSecond } from './support/table';

interface GcOptions {
  root?: string;
  olderThan?: string;
  dryRun?: boolean;
  project?: string;
  keepFailed?: boolean;
  rotateBus?: boolean;
  busMaxSize?: string;
  deleteDoneTasks?: boolean;
  json?: boolean;
  force?: boolean;
}

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

function dirSize(path: string): number {
  let size = 0;
  let entries;
  try {
    entries = readdirSync(path, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const child = join(path, e.name);
    if (e.isDirectory()) size += dirSize(child);
    else {
      try {
        size += statSync(child).size;
      } catch {
        // vanished meanwhile
      }
    }
  }
  return size;
}

const mb = (bytes: number): string => (bytes / MIB).toFixed(1);

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

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
  if (s.rotateBus) rotateIfLarge(join(taskDir, 'TASK-MESSAGE-BUS.md'), s, report);
  const runsDir = join(taskDir, 'runs');
  const runs = listRunNames(runsDir) ?? [];
  let remaining = 0;
  for (const run of runs) {
    const runDir = join(runsDir, run);
    const infoPath = join(runDir, 'run-info.yaml');
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
    const size = dirSize(runDir);
    const started = utcSecond(info.start_time);
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

export function runGc(layout: RunsLayout, projects: string[], s: GcSettings, probe: LivenessProbe): GcReport {
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
    if (s.rotateBus) rotateIfLarge(join(projectDir, 'PROJECT-MESSAGE-BUS.md'), s, report);
    for (const task of listRunNames(projectDir) ?? []) {
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

@Command({
  name: 'gc',
  description: 'Delete old finished run folders (and optionally rotate large message buses and remove finished tasks)',
})
export class GcCommand extends CommandRunner {
  constructor(@Inject(LIVENESS_PROBE) private readonly probe: LivenessProbe) {
    super();
  }

  async run(params: string[], options: GcOptions = {}): Promise<void> {
    if (params.length) throw new UsageError(`unexpected argument ${JSON.stringify(params[0])}`);
    const olderThanMs = durationFlag(options.olderThan ?? '168h', '--older-than');
    const sizeText = options.busMaxSize ?? '10MB';
    let busMaxBytes: number;
    try {
      busMaxBytes = parseSizeBytes(sizeText);
    } catch (err) {
      throw new UsageError(`invalid --bus-max-size ${JSON.stringify(sizeText)}: ${(err as Error).message}`);
    }
    const layout = new RunsLayout(resolveRoot(options.root));
    let projects: string[];
    if (options.project?.trim()) {
      const dir = layout.projectDir(options.project.trim());
      if (!isDir(dir)) throw new Error(`project directory not found: ${dir}`);
      projects = [options.project.trim()];
    } else {
      if (!isDir(layout.root)) throw new Error(`root directory not found: ${layout.root}`);
      projects = listRunNames(layout.root) ?? [];
    }
    const json = !!options.json;
    // worktrees first: --delete-done-tasks would remove the records that name them
    const worktrees = await gcTaskWorktrees(layout.root, {
      cutoff: new Date(Date.now() - olderThanMs),
      dryRun: !!options.dryRun,
      force: !!options.force,
      projects: options.project?.trim() ? projects : undefined,
      log: json ? () => undefined : (line) => process.stdout.write(`${line}\n`),
      warn: (line) => process.stderr.write(`${line}\n`),
    });
    const report = runGc(layout, projects, {
      cutoff: new Date(Date.now() - olderThanMs),
      dryRun: !!options.dryRun,
      keepFailed: !!options.keepFailed,
      rotateBus: !!options.rotateBus,
      busMaxBytes,
      deleteDoneTasks: !!options.deleteDoneTasks,
      log: json ? () => undefined : (line) => process.stdout.write(`${line}\n`),
      warn: (line) => process.stderr.write(`${line}\n`),
    }, this.probe);
    if (json) process.stdout.write(`${JSON.stringify({ ...report, worktrees, older_than: formatGoDuration(olderThanMs) }, null, 2)}\n`);
    else process.stdout.write(gcSummary(report));
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--older-than <duration>', description: 'delete runs that started longer ago than this (Go duration, default 168h)' })
  parseOlderThan(v: string): string {
    return v;
  }

  @Option({ flags: '--dry-run', description: 'print what would be deleted or rotated, change nothing' })
  parseDryRun(): boolean {
    return true;
  }

  @Option({ flags: '--project <id>', description: 'only this project (default: every project under the root)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--keep-failed', description: 'keep failed runs' })
  parseKeepFailed(): boolean {
    return true;
  }

  @Option({ flags: '--rotate-bus', description: 'archive message bus files larger than --bus-max-size (<bus>.<YYYYMMDD-HHMMSS>.archived)' })
  parseRotateBus(): boolean {
    return true;
  }

  @Option({ flags: '--bus-max-size <size>', description: 'rotation threshold: bytes with optional KB/MB/GB suffix, 1024-based (default 10MB)' })
  parseBusMaxSize(v: string): string {
    return v;
  }

  @Option({ flags: '--delete-done-tasks', description: 'also delete task folders that have DONE, no runs left and are older than --older-than' })
  parseDeleteDoneTasks(): boolean {
    return true;
  }

  @Option({ flags: '--force', description: 'also remove worktrees of old tasks whose branch is not merged (the branch is kept)' })
  parseForce(): boolean {
    return true;
  }

  @Option({ flags: '--json', description: 'print a JSON report (deleted runs, freed bytes, deleted tasks, rotated buses, warnings) instead of text' })
  parseJson(): boolean {
    return true;
  }
}
