import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { appendRecordSync, readRunInfo, runInfoFile, runInfoIn, taskRunsDir, writeFileAtomic } from '@app/storage';
import { allRuns, descendantRuns, ScannedRun } from '../run-scan';
import { pruneIdleQueue } from '../run-slots';

/**
 * A task tree's run ledger (issue #33): `<top run>/TREE-RUNS`, one line per descendant run (its run
 * folder relative to the runs root), appended under the tree's FANOUT.lock. Counting the tree's
 * runs reads this one file instead of every run under the root. Crash-safe: a child's creation is
 * bracketed by `+` (before) and its folder or `-` (after); a `+` left open means its writer died
 * mid-creation, and the ledger is recomputed from the run files (parent_run_id chains) and
 * rewritten. A missing ledger (a tree from before the ledger) is recomputed the same way.
 */
export const TREE_LEDGER_FILE = 'TREE-RUNS';
const OPEN = '+';
const ABORTED = '-';

export interface TreeRef {
  topRunId: string;
  /** Absent when the parent run was not found: the tree is then counted by a scan. */
  topRunDir?: string;
  topTaskDir: string;
  /** Task folders on the parent chain (their settings hold for the sub-tree). */
  taskDirs: string[];
  ledger?: string;
}

const taskOfRun = (runDir: string): string => dirname(dirname(runDir));

/**
 * The parent chain of `parentRunId` up to the tree's top run. Each run is looked up in the task
 * folders given as hints and those already on the chain (a child usually lives in its parent's
 * task); only a miss scans the runs root, once.
 */
export function treeOf(root: string, parentRunId: string, hints: (string | undefined)[]): TreeRef {
  const taskDirs: string[] = [];
  const places = hints.filter((h): h is string => !!h);
  let scanned: Map<string, ScannedRun> | undefined;
  const find = (runId: string): ScannedRun | undefined => {
    for (const dir of [...places, ...taskDirs]) {
      const path = runInfoIn(taskRunsDir(dir), runId);
      if (!existsSync(path)) continue;
      try {
        return { dir: dirname(path), info: readRunInfo(path) };
      } catch {
        return undefined;
      }
    }
    scanned ??= new Map(allRuns(root).map((r) => [r.info.run_id, r]));
    return scanned.get(runId);
  };
  let top: ScannedRun | undefined;
  const seen = new Set<string>();
  for (let current: string | undefined = parentRunId; current && !seen.has(current); ) {
    seen.add(current);
    const run = find(current);
    if (!run) break;
    top = run;
    if (!taskDirs.includes(taskOfRun(run.dir))) taskDirs.push(taskOfRun(run.dir));
    current = run.info.parent_run_id;
  }
  if (!top) return { topRunId: parentRunId, topTaskDir: places.at(-1) ?? root, taskDirs };
  return { topRunId: top.info.run_id, topRunDir: top.dir, topTaskDir: taskOfRun(top.dir), taskDirs, ledger: join(top.dir, TREE_LEDGER_FILE) };
}

/** A new root run starts its tree's ledger (empty): its first child is then counted without a scan. */
export function startTreeLedger(runDir: string): void {
  try {
    writeFileSync(join(runDir, TREE_LEDGER_FILE), '', { flag: 'wx', mode: 0o644 });
  } catch {
    // present already (a reused run folder) or not writable: counted by a scan then
  }
}

/** Ledger record: `+` before a child is created, then its folder (relative to the root), or `-` when creation failed. */
export function appendTreeRun(ledger: string, root: string, entry: { runDir: string } | 'open' | 'aborted'): void {
  const line = entry === 'open' ? OPEN : entry === 'aborted' ? ABORTED : relative(root, entry.runDir);
  appendRecordSync(ledger, `${line}\n`);
}

/** Descendant run folders per the ledger, or undefined when it is missing or a creation was left open. */
function readLedger(ledger: string, root: string): string[] | undefined {
  let text: string;
  try {
    text = readFileSync(ledger, 'utf8');
  } catch {
    return undefined;
  }
  const dirs: string[] = [];
  let open = false;
  for (const line of text.split('\n')) {
    if (!line) continue;
    if (line === OPEN) {
      if (open) return undefined;
      open = true;
    } else if (line === ABORTED) {
      open = false;
    } else {
      open = false;
      dirs.push(join(root, line));
    }
  }
  return open ? undefined : dirs;
}

/** Recomputes the descendants of the top run from the run files and rewrites the ledger. */
function rebuildLedger(root: string, tree: TreeRef): string[] {
  const dirs = descendantRuns(allRuns(root), tree.topRunId).map((r) => r.dir);
  if (tree.ledger) writeFileAtomic(tree.ledger, dirs.map((d) => `${relative(root, d)}\n`).join(''));
  return dirs;
}

/** The ledger's run folders; recomputed (and rewritten) when it is missing or was left open. Under FANOUT.lock. */
export function treeRunDirs(root: string, tree: TreeRef): string[] {
  return (tree.ledger ? readLedger(tree.ledger, root) : undefined) ?? rebuildLedger(root, tree);
}

/**
 * Runs in the tree (the top run and its descendants, finished or not, whose run-info exists).
 * Call under the tree's FANOUT.lock. Reads the ledger; recomputes it from the files when it is
 * missing or was left open by a crash.
 */
export function countTreeRuns(root: string, tree: TreeRef): number {
  const dirs = treeRunDirs(root, tree);
  const existing = new Set(dirs.filter((d) => existsSync(runInfoFile(d))));
  return existing.size + (tree.topRunDir ? 1 : 0);
}

/** The folder of the FIFO slot queue of `parentRunId`'s children (max_children_per_run). */
export function childQueueBase(root: string, parentRunId: string): string {
  return join(root, '.conductor', 'fanout', parentRunId);
}

/** `run-agent gc`: removes the children queues nobody uses (no child running or waiting); returns their parent run ids. */
export function pruneChildQueues(root: string, dryRun = false): string[] {
  let parents: string[];
  try {
    parents = readdirSync(join(root, '.conductor', 'fanout'));
  } catch {
    return [];
  }
  return parents.filter((p) => pruneIdleQueue(childQueueBase(root, p), dryRun));
}
