import { describe, expect, it } from 'vitest';
import type { FlatRun } from '../src/api/types';
import { buildTaskTree, findTask, flattenTree, runKey, taskKey } from '../src/data/tree';

let seq = 0;
function run(id: string, task: string, extra: Partial<FlatRun> = {}): FlatRun {
  seq++;
  return {
    id,
    task_id: task,
    agent: 'claude',
    status: 'completed',
    exit_code: 0,
    start_time: `2026-01-01T00:00:${String(seq).padStart(2, '0')}Z`,
    end_time: `2026-01-01T00:01:${String(seq).padStart(2, '0')}Z`,
    ...extra,
  };
}

describe('buildTaskTree', () => {
  it('nests restarts under the first attempt of their chain with attempt numbers', () => {
    seq = 0;
    const tree = buildTaskTree([
      run('r1', 'task-a', { status: 'failed' }),
      run('r2', 'task-a', { previous_run_id: 'r1', status: 'failed' }),
      run('r3', 'task-a', { previous_run_id: 'r2', status: 'running', end_time: '0001-01-01T00:00:00Z' }),
    ]);
    expect(tree).toHaveLength(1);
    const task = tree[0];
    expect(task.status).toBe('running');
    expect(task.roots.map((n) => n.run.id)).toEqual(['r1']);
    const head = task.roots[0];
    expect(head.attempt).toBe(1);
    expect(head.children.map((c) => [c.run.id, c.relation, c.attempt])).toEqual([
      ['r2', 'restart', 2],
      ['r3', 'restart', 3],
    ]);
  });

  it('nests child runs under their parent run and child tasks under the parent task', () => {
    seq = 0;
    const tree = buildTaskTree([
      run('p1', 'task-parent', { status: 'running' }),
      run('c1', 'task-parent', { parent_run_id: 'p1' }),
      run('x1', 'task-child', { parent_run_id: 'p1' }),
    ]);
    expect(tree.map((t) => t.id)).toEqual(['task-parent']);
    const parent = tree[0];
    expect(parent.roots[0].children.map((c) => [c.run.id, c.relation])).toEqual([['c1', 'child']]);
    expect(parent.childTasks.map((t) => t.id)).toEqual(['task-child']);
    expect(parent.childTasks[0].parentTaskId).toBe('task-parent');
    expect(findTask(tree, 'task-child')?.id).toBe('task-child');
  });

  it('survives cycles in previous_run_id and cross-task parents', () => {
    seq = 0;
    const tree = buildTaskTree([
      run('a', 'task-1', { previous_run_id: 'b' }),
      run('b', 'task-1', { previous_run_id: 'a' }),
      run('m', 'task-2', { parent_run_id: 'n' }),
      run('n', 'task-3', { parent_run_id: 'm' }),
    ]);
    const ids = (nodes: typeof tree): string[] => nodes.flatMap((t) => [t.id, ...ids(t.childTasks)]);
    expect(ids(tree).sort()).toEqual(['task-1', 'task-2', 'task-3']);
    const t1 = findTask(tree, 'task-1')!;
    const count = (ns: typeof t1.roots): number => ns.reduce((s, n) => s + 1 + count(n.children), 0);
    expect(count(t1.roots)).toBe(2);
  });

  it('orders tasks newest first, stably, and includes tasks without runs', () => {
    seq = 0;
    const runs = [run('r1', 'task-old'), run('r2', 'task-new')];
    const tasks = [{ id: 'task-empty', project_id: 'p', status: '-', last_activity: '', run_count: 0, done: false }];
    const first = buildTaskTree(runs, tasks).map((t) => t.id);
    expect(first).toEqual(['task-empty', 'task-new', 'task-old']);
    // A status change does not move anything.
    const changed = buildTaskTree([{ ...runs[0], status: 'running' }, runs[1]], tasks).map((t) => t.id);
    expect(changed).toEqual(first);
  });

  it('marks a task whose latest run completed and has DONE as completed', () => {
    seq = 0;
    const tree = buildTaskTree([run('r1', 'task-a', { status: 'failed' }), run('r2', 'task-a')], [
      { id: 'task-a', project_id: 'p', status: 'all_finished', last_activity: '', run_count: 2, done: true },
    ]);
    expect(tree[0].status).toBe('completed');
    expect(tree[0].done).toBe(true);
  });
});

describe('flattenTree', () => {
  seq = 0;
  const tree = buildTaskTree([
    run('r1', 'task-alpha', { status: 'failed' }),
    run('r2', 'task-alpha', { previous_run_id: 'r1' }),
    run('r3', 'task-beta', { status: 'running', agent: 'codex' }),
  ]);

  it('shows only task rows until a task is expanded or selected', () => {
    expect(flattenTree(tree, new Map(), { text: '', status: 'all' }).map((r) => r.key)).toEqual([taskKey('task-beta'), taskKey('task-alpha')]);
    const open = flattenTree(tree, new Map(), { text: '', status: 'all' }, 'task-alpha');
    expect(open.map((r) => [r.key, r.depth])).toEqual([
      [taskKey('task-beta'), 0],
      [taskKey('task-alpha'), 0],
      [runKey('r1'), 1],
      [runKey('r2'), 2],
    ]);
    const collapsedRun = flattenTree(tree, new Map([[runKey('r1'), false]]), { text: '', status: 'all' }, 'task-alpha');
    expect(collapsedRun.map((r) => r.key)).toEqual([taskKey('task-beta'), taskKey('task-alpha'), runKey('r1')]);
  });

  it('filters by text over task ids, run ids and agents, and by status', () => {
    expect(flattenTree(tree, new Map(), { text: 'ALPHA', status: 'all' }).map((r) => r.key)).toEqual([taskKey('task-alpha')]);
    expect(flattenTree(tree, new Map(), { text: 'codex', status: 'all' }).map((r) => r.key)).toEqual([taskKey('task-beta')]);
    expect(flattenTree(tree, new Map(), { text: 'r2', status: 'all' }).map((r) => r.key)).toEqual([taskKey('task-alpha')]);
    expect(flattenTree(tree, new Map(), { text: '', status: 'running' }).map((r) => r.key)).toEqual([taskKey('task-beta')]);
    expect(flattenTree(tree, new Map(), { text: '', status: 'failed' }).map((r) => r.key)).toEqual([taskKey('task-alpha')]);
    expect(flattenTree(tree, new Map(), { text: 'nothing', status: 'all' })).toEqual([]);
  });

  it('keeps a parent task visible (and open) when only its child task matches', () => {
    seq = 0;
    const nested = buildTaskTree([run('p1', 'task-parent'), run('c1', 'task-kid', { parent_run_id: 'p1' })]);
    const rows = flattenTree(nested, new Map(), { text: 'kid', status: 'all' });
    expect(rows.map((r) => [r.key, r.depth])).toEqual([
      [taskKey('task-parent'), 0],
      [runKey('p1'), 1],
      [taskKey('task-kid'), 1],
    ]);
  });
});
