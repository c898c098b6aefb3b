import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseYaml, stringifyYaml, writeFileAtomic } from '@app/storage';
import { WorktreeError } from './worktree.errors';

/** `<task>/WORKTREE.yaml`: written once the worktree is usable; the task's source of truth for diff, merge and gc. */
export const WORKTREE_RECORD_FILE = 'WORKTREE.yaml';

export type MergeStatus = 'merged' | 'conflict' | 'failed';

export interface WorktreeRecord {
  project_id: string;
  task_id: string;
  /** Main working tree of the repository. */
  repo: string;
  /** The worktree folder (`<repo>/.conductor/worktrees/<task-id>`). */
  path: string;
  branch: string;
  base_commit: string;
  /** Branch the task merges into ('' when started from a detached HEAD, a tag or a commit). */
  base_branch: string;
  /** Free TCP port reserved for the task (`JRUN_PORT`). */
  port: number;
  /** Declared paths the task expects to touch (overlap warnings). */
  paths: string[];
  setup_done: boolean;
  /** The approved repository setup script that ran in this worktree (docs/worktrees.md). */
  setup_script?: { path: string; sha256: string };
  created_at: string;
  merge_status?: MergeStatus;
  merge_detail?: string;
  merge_files?: string[];
  merged_commit?: string;
  merged_at?: string;
  /** Set by gc once the worktree folder is gone. */
  removed_at?: string;
}

export function recordPath(taskDir: string): string {
  return join(taskDir, WORKTREE_RECORD_FILE);
}

export function readWorktreeRecord(taskDir: string): WorktreeRecord | undefined {
  const path = recordPath(taskDir);
  if (!existsSync(path)) return undefined;
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new WorktreeError('IO', `read ${path}: ${(err as Error).message.split('\n')[0]}`);
  }
  const r = doc as Partial<WorktreeRecord> | null;
  if (!r || typeof r !== 'object' || typeof r.path !== 'string' || typeof r.repo !== 'string' || typeof r.branch !== 'string') {
    throw new WorktreeError('IO', `read ${path}: not a worktree record`);
  }
  return {
    ...r,
    base_commit: String(r.base_commit ?? ''),
    base_branch: String(r.base_branch ?? ''),
    port: Number(r.port ?? 0),
    paths: Array.isArray(r.paths) ? r.paths.map(String) : [],
    setup_done: r.setup_done === true,
  } as WorktreeRecord;
}

/** Atomic (temp + fsync + rename): a crash leaves the old record or the new one. */
export function writeWorktreeRecord(taskDir: string, record: WorktreeRecord): void {
  mkdirSync(taskDir, { recursive: true, mode: 0o755 });
  writeFileAtomic(recordPath(taskDir), stringifyYaml(record), 'WORKTREE.*.yaml.tmp');
}

export function updateWorktreeRecord(taskDir: string, patch: Partial<WorktreeRecord>): WorktreeRecord {
  const current = readWorktreeRecord(taskDir);
  if (!current) throw new WorktreeError('NOT_FOUND', `task has no worktree (${recordPath(taskDir)} missing)`);
  const next = { ...current, ...patch };
  for (const key of Object.keys(next) as (keyof WorktreeRecord)[]) if (next[key] === undefined) delete next[key];
  writeWorktreeRecord(taskDir, next);
  return next;
}
