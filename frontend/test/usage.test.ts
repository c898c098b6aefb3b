import { describe, expect, it } from 'vitest';
import { formatCost, formatTokens, holdText, totalOf } from '../src/data/usage';
import { normalizeStatus } from '../src/data/status';
import { buildTaskTree } from '../src/data/tree';
import type { FlatRun, TaskListItem } from '../src/api/types';

describe('usage panel data (#18)', () => {
  it('formats tokens and cost', () => {
    expect(formatTokens(1234567)).toBe('1,234,567');
    expect(formatTokens(undefined)).toBe('-');
    expect(formatCost(0.0123)).toBe('$0.0123');
    expect(formatCost(2)).toBe('$2.00');
    expect(formatCost(undefined)).toBe('-');
    expect(totalOf({ input_tokens: 10, output_tokens: 5, cache_read_tokens: 100, cache_write_tokens: 7 })).toBe(15);
  });

  it('explains a hold', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(holdText({ status: 'rate_limited', resume_at: '2026-01-01T00:00:30Z' }, now)).toBe('Rate limited: resumes at 2026-01-01T00:00:30Z (in 30s)');
    expect(holdText({ status: 'budget_exceeded', budget_exceeded: 'budget exceeded: tokens 300 > max 299' }, now)).toBe('Stopped: budget exceeded: tokens 300 > max 299');
    expect(holdText({ status: 'paused', paused: 'project' }, now)).toBe('Paused (whole project): no new attempt until unpaused');
    expect(holdText({ status: 'running' }, now)).toBeUndefined();
  });

  it('rate_limited, paused and budget_exceeded show as held, and the server status wins over the runs', () => {
    for (const s of ['rate_limited', 'paused', 'budget_exceeded']) expect(normalizeStatus(s)).toBe('held');
    const run = { id: 'r1', project_id: 'p', task_id: 'task-20260101-000000-aaa', status: 'failed', exit_code: 1, start_time: '2026-01-01T00:00:00Z', end_time: '2026-01-01T00:00:01Z' } as unknown as FlatRun;
    const task = { id: 'task-20260101-000000-aaa', project_id: 'p', status: 'rate_limited', last_activity: '', run_count: 1, done: false } as TaskListItem;
    expect(buildTaskTree([run], [task])[0].status).toBe('held');
    expect(buildTaskTree([run], [{ ...task, status: 'failed' }])[0].status).toBe('failed');
  });
});
