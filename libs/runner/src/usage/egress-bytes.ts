import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '@app/storage';

/** `<run>/egress-bytes.json`: bytes a sandboxed run moved through its egress proxy, per `host:port` (both directions). */
export const EGRESS_BYTES_FILE = 'egress-bytes.json';

/** Written once the run's proxy has stopped (atomic, fsync'd). */
export function writeEgressBytes(runDir: string, bytes: Record<string, number>): void {
  writeFileAtomic(join(runDir, EGRESS_BYTES_FILE), `${JSON.stringify(bytes, null, 2)}\n`);
}

/** The run's counts; undefined when it has none (not sandboxed) or the file is unreadable (that run's problem only). */
export function readEgressBytes(runDir: string): Record<string, number> | undefined {
  const path = join(runDir, EGRESS_BYTES_FILE);
  if (!existsSync(path)) return undefined;
  try {
    const doc = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return undefined;
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries(doc)) if (typeof v === 'number' && Number.isFinite(v) && v >= 0) out[k] = Math.trunc(v);
    return out;
  } catch {
    return undefined;
  }
}

/** Per-`host:port` sums over runs (keys sorted); undefined when no run was sandboxed. */
export function sumEgressBytes(runDirs: Iterable<string>): Record<string, number> | undefined {
  let total: Record<string, number> | undefined;
  for (const dir of runDirs) {
    const b = readEgressBytes(dir);
    if (!b) continue;
    total ??= {};
    for (const [k, v] of Object.entries(b)) total[k] = (total[k] ?? 0) + v;
  }
  return total && Object.fromEntries(Object.entries(total).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
