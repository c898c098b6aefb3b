/** The limits of the config's `defaults:` section (budgets, delegation, admission), checked as they are read (load-config.ts builds the rest). */
import { parseByteSize } from './byte-size';
import type { DefaultsConfig } from './config.types';
import { parseGoDuration } from './duration';
import type { RawReader } from './raw-config';

/** defaults.max_tokens / max_cost_usd / max_wall_time / resume_mode (issue #18). */
export function budgetDefaults(r: RawReader): Pick<DefaultsConfig, 'max_tokens' | 'max_cost_usd' | 'max_wall_time' | 'resume_mode' | 'done_criteria_timeout' | 'max_delegation_depth' | 'max_children_per_run' | 'max_runs_per_tree'> {
  const out: Pick<DefaultsConfig, 'max_tokens' | 'max_cost_usd' | 'max_wall_time' | 'resume_mode' | 'done_criteria_timeout' | 'max_delegation_depth' | 'max_children_per_run' | 'max_runs_per_tree'> = {};
  const tokens = r.int(['defaults', 'max_tokens']);
  if (tokens < 0) r.fail(['defaults', 'max_tokens'], 'must not be negative');
  if (tokens > 0) out.max_tokens = tokens;
  const cost = r.get(['defaults', 'max_cost_usd']);
  if (cost !== undefined && cost !== null) {
    if (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0) r.fail(['defaults', 'max_cost_usd'], `must be a non-negative number, got ${JSON.stringify(cost)}`);
    if (cost > 0) out.max_cost_usd = cost;
  }
  const wall = r.str(['defaults', 'max_wall_time']).trim();
  if (wall !== '') {
    try {
      parseGoDuration(wall);
    } catch {
      r.fail(['defaults', 'max_wall_time'], `must be a duration like 30m or 2h, got ${JSON.stringify(wall)}`);
    }
    out.max_wall_time = wall;
  }
  const mode = r.str(['defaults', 'resume_mode']).trim();
  if (mode !== '' && mode !== 'continue' && mode !== 'fresh') r.fail(['defaults', 'resume_mode'], `must be continue or fresh, got ${JSON.stringify(mode)}`);
  if (mode !== '') out.resume_mode = mode;
  if (r.durationBetween(['defaults', 'done_criteria_timeout'], 1000, 24 * 3600_000, '1s and 24h', '10m') !== undefined) {
    out.done_criteria_timeout = r.str(['defaults', 'done_criteria_timeout']).trim();
  }
  const depth = r.int(['defaults', 'max_delegation_depth']);
  if (depth < 0 || depth > 1000) r.fail(['defaults', 'max_delegation_depth'], `must be from 1 to 1000 (0 = the default, 16), got ${depth}`);
  if (depth > 0) out.max_delegation_depth = depth;
  for (const key of ['max_children_per_run', 'max_runs_per_tree'] as const) {
    const n = r.int(['defaults', key]);
    if (n < 0 || n > 100000) r.fail(['defaults', key], `must be from 1 to 100000 (0 = no limit), got ${n}`);
    if (n > 0) out[key] = n;
  }
  return out;
}

/** defaults.min_available_memory (issue #33): a size like 2GiB, stored in bytes; unset/0 = off. */
export function admissionDefaults(r: RawReader): Pick<DefaultsConfig, 'min_available_memory'> {
  const path = ['defaults', 'min_available_memory'];
  const raw = r.get(path);
  if (raw === undefined || raw === null || raw === '') return {};
  let bytes = NaN;
  if (typeof raw === 'number') bytes = raw;
  else if (typeof raw === 'string') {
    try {
      bytes = parseByteSize(raw);
    } catch {
      // reported below
    }
  }
  if (!Number.isSafeInteger(bytes) || bytes < 0) r.fail(path, `must be a size like 2GiB or 512MiB (0 = off), got ${JSON.stringify(raw)}`);
  return bytes > 0 ? { min_available_memory: bytes } : {};
}
