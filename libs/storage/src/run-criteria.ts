import type { CriterionResultView } from '@app/contracts';
/**
 * Added run-info.yaml field (issue #33): the completion criteria checked when the run's agent
 * wrote DONE. Upstream's reader ignores the key (yaml.v3 skips unknown fields). One result is the
 * wire type itself (libs/contracts); the record differs only in its `checked_at` (a Date here).
 */
export type CriterionResult = CriterionResultView;

export interface RunCriteria {
  passed: boolean;
  /** One line: why the criteria did not pass (first failure, empty list, unreadable settings…). */
  reason?: string;
  checked_at: Date;
  results: CriterionResult[];
}

/** Bound of `output_tail` in run-info (the prompt of the next attempt gets its own bound). */
export const RUN_CRITERIA_TAIL_CHARS = 2000;

/** JSON strings are YAML double-quoted scalars (lone surrogates, which YAML refuses, are replaced). */
function q(s: string): string {
  return JSON.stringify(s.replace(/[\uD800-\uDFFF]/g, (c, i: number, all: string) => (isPaired(all, i) ? c : '\uFFFD')));
}

function isPaired(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff) return i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff;
  return i > 0 && s.charCodeAt(i - 1) >= 0xd800 && s.charCodeAt(i - 1) <= 0xdbff;
}

/** The `criteria:` block of run-info.yaml (4-space indent, like `usage:`). */
export function serializeRunCriteria(c: RunCriteria): string {
  let out = 'criteria:\n';
  out += `    passed: ${c.passed}\n`;
  if (c.reason) out += `    reason: ${q(c.reason)}\n`;
  out += `    checked_at: ${q(c.checked_at.toISOString())}\n`;
  if (c.results.length === 0) return out + '    results: []\n';
  out += '    results:\n';
  for (const r of c.results) {
    out += `        - command: ${q(r.command)}\n`;
    out += `          exit_code: ${Math.trunc(r.exit_code)}\n`;
    out += `          passed: ${r.passed}\n`;
    if (r.timed_out) out += '          timed_out: true\n';
    out += `          duration_ms: ${Math.max(0, Math.trunc(r.duration_ms))}\n`;
    if (r.error) out += `          error: ${q(r.error)}\n`;
    if (r.output_tail) out += `          output_tail: ${q(r.output_tail.slice(-RUN_CRITERIA_TAIL_CHARS))}\n`;
  }
  return out;
}

/** The parsed `criteria:` value, or undefined when absent or malformed (a bad block never makes the record corrupt). */
export function parseRunCriteria(raw: unknown): RunCriteria | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const r = raw as Record<string, unknown>;
  if (typeof r.passed !== 'boolean' || !Array.isArray(r.results)) return undefined;
  const checked = new Date(typeof r.checked_at === 'string' ? r.checked_at : NaN);
  const out: RunCriteria = { passed: r.passed, checked_at: Number.isNaN(checked.getTime()) ? new Date(0) : checked, results: [] };
  if (typeof r.reason === 'string' && r.reason) out.reason = r.reason;
  for (const item of r.results as unknown[]) {
    if (typeof item !== 'object' || item === null) continue;
    const e = item as Record<string, unknown>;
    if (typeof e.command !== 'string') continue;
    const res: CriterionResult = {
      command: e.command,
      exit_code: typeof e.exit_code === 'number' ? Math.trunc(e.exit_code) : -1,
      passed: e.passed === true,
      duration_ms: typeof e.duration_ms === 'number' ? Math.max(0, Math.trunc(e.duration_ms)) : 0,
    };
    if (e.timed_out === true) res.timed_out = true;
    if (typeof e.error === 'string' && e.error) res.error = e.error;
    if (typeof e.output_tail === 'string' && e.output_tail) res.output_tail = e.output_tail;
    out.results.push(res);
  }
  // a record claiming a pass with a failed or no command is not trusted as a pass
  if (out.passed && (out.results.length === 0 || out.results.some((x) => !x.passed))) out.passed = false;
  return out;
}
