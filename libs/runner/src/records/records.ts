/**
 * One bad record is that record's problem (issue #29): the record files of a task and its runs,
 * checked one by one. Listings show a run or task whose file cannot be parsed as `corrupt` with the
 * reason from here; `run-agent doctor` lists every such file of a runs root.
 */
import { existsSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { checkBusPath } from '@app/messagebus';
import { readDependsOn, readRunInfo, StorageError, TASK_BUS_FILE, TASK_CONFIG_FILE, type StorageIndex } from '@app/storage';
import { readWorktreeRecord, WORKTREE_RECORD_FILE } from '@app/worktree';
import { taskSettingsProblem, TASK_SETTINGS_FILE } from '../usage/task-settings';

export type RecordKind = 'run-info' | 'task-config' | 'task-settings' | 'worktree' | 'message-bus';

export interface RecordProblem {
  /** Absolute path of the file. */
  path: string;
  kind: RecordKind;
  reason: string;
}

const firstLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0];

/**
 * Problems of the task's own record files (TASK-CONFIG.yaml, TASK-SETTINGS.yaml, WORKTREE.yaml,
 * and a TASK-MESSAGE-BUS.md that is not a regular file);
 * `has` (a listing check) lets callers skip files they know are absent.
 */
export function taskRecordProblems(taskDir: string, has: (name: string) => boolean = (n) => existsSync(join(taskDir, n))): RecordProblem[] {
  const out: RecordProblem[] = [];
  const check = (name: string, kind: RecordKind, read: () => string | undefined | void) => {
    if (!has(name)) return;
    try {
      const reason = read();
      if (reason) out.push({ path: join(taskDir, name), kind, reason });
    } catch (err) {
      out.push({ path: join(taskDir, name), kind, reason: firstLine(err) });
    }
  };
  check(TASK_CONFIG_FILE, 'task-config', () => void readDependsOn(taskDir));
  check(TASK_SETTINGS_FILE, 'task-settings', () => taskSettingsProblem(taskDir));
  check(WORKTREE_RECORD_FILE, 'worktree', () => void readWorktreeRecord(taskDir));
  // a FIFO, device, folder or symlink in place of the bus: checked with lstat, never opened
  check(TASK_BUS_FILE, 'message-bus', () => void checkBusPath(join(taskDir, TASK_BUS_FILE)));
  return out;
}

/** depends_on of TASK-CONFIG.yaml, or none when the file cannot be parsed (listings then show the task as corrupt). */
export function dependsOnOrNone(taskDir: string): string[] {
  try {
    return readDependsOn(taskDir);
  } catch {
    return [];
  }
}

/** The reason of a task's first record file that cannot be parsed, for listings; undefined when all parse. */
export function taskCorruptReason(taskDir: string, has?: (name: string) => boolean): string | undefined {
  const p = taskRecordProblems(taskDir, has)[0];
  return p ? p.reason : undefined;
}

/** Every record file under the index's runs root that cannot be parsed (projects → tasks → runs), in listing order. */
export function scanRecords(index: StorageIndex): RecordProblem[] {
  const layout = index.layout;
  const out: RecordProblem[] = [];
  for (const project of index.listProjects()) {
    const projectBus = layout.projectBus(project);
    try {
      checkBusPath(projectBus);
    } catch (err) {
      out.push({ path: projectBus, kind: 'message-bus', reason: firstLine(err) });
    }
    for (const task of index.listTasks(project)) {
      out.push(...taskRecordProblems(layout.taskDir(project, task)));
      for (const run of index.listRuns(project, task)) {
        const path = layout.runInfoPath(project, task, run);
        try {
          if (statSync(path, { throwIfNoEntry: false })) readRunInfo(path);
        } catch (err) {
          if (err instanceof StorageError && err.code === 'NOT_FOUND') continue;
          out.push({ path, kind: 'run-info', reason: firstLine(err) });
        }
      }
    }
  }
  return out;
}

/** `<path relative to root>` for the text report. */
export function relativeRecordPath(root: string, p: RecordProblem): string {
  return relative(root, p.path);
}
