import { appendFileSync } from 'node:fs';

/**
 * One fault spec's figures (issue #31): printed by the spec, and added to the run's tally
 * ($FAULT_TALLY_FILE, set by tally-reporter.js) which prints the whole suite's totals with the
 * seeds that replay it. `violations` is 1 when a spec stopped at a violated invariant.
 */
export interface FaultTally {
  suite: string;
  /** FAULT_SEED of the spec (undefined: no randomness, nothing to replay). */
  seed?: number;
  cases: number;
  faults: number;
  checks: number;
  violations: number;
}

export function recordTally(t: FaultTally): void {
  const seed = t.seed === undefined ? '' : `seed ${t.seed} (FAULT_SEED), `;
  console.log(`${t.suite}: ${seed}${t.cases} cases, ${t.faults} injected faults, ${t.checks} invariant checks, ${t.violations} violations`);
  const file = process.env.FAULT_TALLY_FILE;
  if (file) appendFileSync(file, `${JSON.stringify(t)}\n`);
}

/** Counts one invariant check of a fault spec; a violation is counted and throws with `context` (the seed and case that replay it). */
export function checkInvariant(stats: { checks: number; violations: number }, context: string, what: string, ok: boolean, detail: () => string = () => ''): void {
  stats.checks++;
  if (ok) return;
  stats.violations++;
  throw new Error(`invariant violated (${context}): ${what} ${detail()}`);
}
