import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Idempotency and delivery records are kept for a bounded window (docs/triggers.md): a record
 * older than `maxAgeMs` goes, and of the rest only the newest `maxCount` stay. A caller retrying
 * with a key older than the window starts a new task; that is the bound's price.
 */
export interface PruneWindow {
  maxAgeMs: number;
  maxCount: number;
}

/** 7 days and 10 000 records per trigger (and for GitHub deliveries, which GitHub redelivers for 3 days at most). */
export const IDEMPOTENCY_WINDOW: PruneWindow = { maxAgeMs: 7 * 24 * 3600_000, maxCount: 10_000 };
/** A folder is pruned at most this often. */
export const PRUNE_INTERVAL_MS = 60_000;

/**
 * Removes the `*.json` records of `dir` outside the window, judged by their modification time (a
 * damaged record is pruned like any other). Returns how many were removed.
 */
export function pruneRecords(dir: string, window: PruneWindow, now = Date.now()): number {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return 0;
  }
  const records: { path: string; at: number }[] = [];
  for (const name of names) {
    const path = join(dir, name);
    try {
      records.push({ path, at: statSync(path).mtimeMs });
    } catch {
      // removed meanwhile
    }
  }
  records.sort((a, b) => b.at - a.at || (a.path < b.path ? -1 : 1)); // newest first
  let removed = 0;
  records.forEach((r, i) => {
    if (i >= window.maxCount || now - r.at > window.maxAgeMs) {
      rmSync(r.path, { force: true });
      removed++;
    }
  });
  return removed;
}

/** Prunes a folder at most once per PRUNE_INTERVAL_MS (per folder). */
export class RecordPruner {
  private readonly last = new Map<string, number>();

  constructor(private readonly window: PruneWindow = IDEMPOTENCY_WINDOW) {}

  maybePrune(dir: string, now = Date.now()): void {
    const at = this.last.get(dir);
    if (at !== undefined && now - at < PRUNE_INTERVAL_MS) return;
    this.last.set(dir, now);
    pruneRecords(dir, this.window, now);
  }
}
