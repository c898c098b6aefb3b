import type { TaskListItem, UsageTotals } from '../api/types';

/** 12345 → "12,345"; undefined → "-". */
export function formatTokens(n: number | undefined): string {
  return n === undefined ? '-' : n.toLocaleString('en-US');
}

/** 0.0123 → "$0.0123"; undefined → "-". */
export function formatCost(c: number | undefined): string {
  if (c === undefined) return '-';
  return `$${c.toFixed(4).replace(/0+$/, '').replace(/\.$/, '.00')}`;
}

export function totalOf(u: UsageTotals): number {
  return u.input_tokens + u.output_tokens;
}

/** One line on why the task's loop waits or stopped (#18), or undefined. */
export function holdText(item: Pick<TaskListItem, 'status' | 'resume_at' | 'paused' | 'budget_exceeded'> | undefined, now = Date.now()): string | undefined {
  if (!item) return undefined;
  if (item.budget_exceeded) return `Stopped: ${item.budget_exceeded}`;
  if (item.status === 'rate_limited' && item.resume_at) {
    const left = Math.max(0, Math.round((Date.parse(item.resume_at) - now) / 1000));
    return `Rate limited: resumes at ${item.resume_at} (in ${left}s)`;
  }
  if (item.paused) return `Paused (${item.paused === 'project' ? 'whole project' : 'this task'}): no new attempt until unpaused`;
  return undefined;
}
