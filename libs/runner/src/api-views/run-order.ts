import type { RunInfo } from '@app/storage';
import { byStartThenId, RunRecord } from './shapes';

/**
 * A project's runs in start order, sorted again only when its listing changed (issue #15: sorting
 * 1,000 runs was a tenth of a runs/flat request). The storage index hands back the same run-info
 * object while a run's file is unchanged, and one object belongs to one run folder, so a listing
 * with the same objects in the same order is the same list: the kept order is returned (a copy,
 * callers may sort or filter it). A run whose view is rebuilt per request (a replicated `running`
 * run) is a new object, so such a listing is always sorted afresh.
 */
export class SortedRunsMemo {
  private readonly kept = new Map<string, { infos: RunInfo[]; sorted: RunRecord[] }>();

  sorted(key: string, runs: RunRecord[]): RunRecord[] {
    const kept = this.kept.get(key);
    if (kept && sameInfos(kept.infos, runs)) return kept.sorted.slice();
    const infos = runs.map((r) => r.info);
    const sorted = runs.sort(byStartThenId);
    this.kept.set(key, { infos, sorted: sorted.slice() });
    return sorted;
  }
}

function sameInfos(infos: RunInfo[], runs: RunRecord[]): boolean {
  if (infos.length !== runs.length) return false;
  for (let i = 0; i < infos.length; i++) if (infos[i] !== runs[i].info) return false;
  return true;
}
