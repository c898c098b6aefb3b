import { describe, expect, it } from 'vitest';
import { buildTaskTree } from '../src/data/tree';
import { normalizeStatus } from '../src/data/status';
import type { FlatRun, TaskListItem } from '../src/api/types';

describe('needs_input in the task tree (#17)', () => {
  it('normalizes needs_input and lets the server task status win over a finished run', () => {
    expect(normalizeStatus('needs_input')).toBe('needs_input');
    const run = { id: 'r1', project_id: 'p', task_id: 'task-20260101-000000-aaa', status: 'completed', exit_code: 0, start_time: '2026-01-01T00:00:00Z', end_time: '2026-01-01T00:00:01Z' } as unknown as FlatRun;
    const waiting = { id: 'task-20260101-000000-aaa', project_id: 'p', status: 'needs_input', last_activity: '', run_count: 1, done: false } as TaskListItem;
    const tree = buildTaskTree([run], [waiting]);
    expect(tree[0].status).toBe('needs_input');
    const finished = buildTaskTree([run], [{ ...waiting, status: 'completed' }]);
    expect(finished[0].status).not.toBe('needs_input');
  });
});
