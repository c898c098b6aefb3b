import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RunsLayout, validateProjectId, validateTaskId, writeFileAtomic, runOutputFile } from '@app/storage';
import type { JobResult } from '@app/runner';
import { RunnerError } from '@app/runner';
import type { AgentRunSettings } from './agent-runs';

export const ITERATE_SUMMARY_FILE = 'ITERATE-SUMMARY.md';
export const DEFAULT_MAX_ITERATIONS = 3;

export type IterateVerdict = 'pass' | 'fail' | 'unknown';

export interface IterationRecord {
  iteration: number;
  implTask: string;
  reviewTask: string;
  implRunId?: string;
  reviewRunId?: string;
  verdict: IterateVerdict;
}

export interface IterateOptions extends AgentRunSettings {
  /** The runs root's layout (of the composition root). */
  layout: RunsLayout;
  projectId: string;
  taskId: string;
  prompt: string;
  reviewPrompt: string;
  maxIterations?: number;
  log?: (line: string) => void;
}

export interface IterateResult {
  outcome: 'passed' | 'exhausted';
  iterations: IterationRecord[];
  summaryPath: string;
}

/**
 * Verdict of a review: whole words, approval first. Upstream matched substrings, so
 * "BYPASS" or "PASSWORD" passed a review; here only APPROVED / PASS / PASSED do.
 */
export function iterateVerdict(text: string): IterateVerdict {
  const upper = text.toUpperCase();
  if (/(^|[^A-Z0-9_])(APPROVED|PASS|PASSED)(?![A-Z0-9_])/.test(upper)) return 'pass';
  if (/(^|[^A-Z0-9_])(REJECTED|FAIL|FAILED|CHANGES_REQUESTED)(?![A-Z0-9_])/.test(upper)) return 'fail';
  return 'unknown';
}

function hhmmss(d: Date): string {
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join('');
}

/** Sub-task id `<task>-<label>-<HHMMSS>`; must still be a valid task id. */
export function iterateSubTaskId(taskId: string, label: string, at: Date): string {
  const id = `${taskId}-${label}-${hhmmss(at)}`;
  try {
    return validateTaskId(id);
  } catch {
    throw new RunnerError('INVALID_INPUT', `task id "${taskId}" is too long for iterate sub-tasks ("${id}" is not a valid task id): use a shorter slug`);
  }
}

export function formatIterateSummary(outcome: IterateResult['outcome'], records: IterationRecord[]): string {
  const rows = records.map((r) => `| ${r.iteration} | ${r.implTask} | ${r.reviewTask} | ${r.verdict} |\n`).join('');
  return `# Iterate Summary\n\noutcome: ${outcome}\n\n| iteration | impl_run | review_run | verdict |\n|-----------|----------|------------|---------|\n${rows}`;
}

function readOutput(result: JobResult | undefined): string {
  if (!result) return '';
  const path = result.info?.output_path || runOutputFile(result.runDir);
  try {
    return existsSync(path) ? readFileSync(path, 'utf8') : '';
  } catch {
    return '';
  }
}

/**
 * Implement → review loop: each iteration runs one implementation job and one review job in
 * their own sub-tasks; the review output decides. A failed implementation run does not stop
 * the loop (the review sees whatever it produced).
 */
export async function runIterate(opts: IterateOptions): Promise<IterateResult> {
  validateProjectId(opts.projectId);
  validateTaskId(opts.taskId);
  const max = opts.maxIterations && opts.maxIterations > 0 ? opts.maxIterations : DEFAULT_MAX_ITERATIONS;
  const now = opts.now ?? (() => new Date());
  const log = opts.log ?? (() => undefined);
  iterateSubTaskId(opts.taskId, `review-iter${max}`, now()); // fail before any run when ids would be invalid
  const taskDir = opts.layout.taskDir(opts.projectId, opts.taskId);
  const records: IterationRecord[] = [];
  let feedback = '';
  let outcome: IterateResult['outcome'] = 'exhausted';
  const job = (taskId: string, prompt: string): Promise<JobResult> =>
    opts.runJob({ root: opts.layout.root, projectId: opts.projectId, taskId, prompt, agent: opts.agent, config: opts.config, cwd: opts.cwd, env: opts.env, idleTimeoutMs: opts.idleTimeoutMs, signal: opts.signal });

  for (let i = 1; i <= max; i++) {
    if (opts.signal?.aborted) break;
    log(`iteration ${i}/${max}`);
    const implTask = iterateSubTaskId(opts.taskId, `impl-iter${i}`, now());
    const implPrompt = feedback ? `${opts.prompt}\n\n## Previous review feedback\n\n${feedback}` : opts.prompt;
    const impl = await job(implTask, implPrompt);
    log(`impl run: ${implTask} (${impl.runId})`);
    if (!impl.ok) log(`impl run failed: ${impl.error ?? 'agent execution failed'}`);

    const reviewTask = iterateSubTaskId(opts.taskId, `review-iter${i}`, now());
    const review = await job(reviewTask, `${opts.reviewPrompt}\n\n## Implementation output to review\n\n${readOutput(impl)}`);
    log(`review run: ${reviewTask} (${review.runId})`);
    feedback = readOutput(review);
    const verdict = review.ok ? iterateVerdict(feedback) : 'unknown';
    records.push({ iteration: i, implTask, reviewTask, implRunId: impl.runId, reviewRunId: review.runId, verdict });
    log(`verdict: ${verdict}`);
    if (verdict === 'pass') {
      outcome = 'passed';
      log(`PASSED on iteration ${i}`);
      break;
    }
  }
  if (outcome === 'exhausted') log(`EXHAUSTED max iterations (${max}) without passing review`);
  mkdirSync(taskDir, { recursive: true });
  const summaryPath = join(taskDir, ITERATE_SUMMARY_FILE);
  writeFileAtomic(summaryPath, formatIterateSummary(outcome, records));
  return { outcome, iterations: records, summaryPath };
}
