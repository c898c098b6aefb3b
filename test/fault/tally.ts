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
