import { describe, expect, it } from 'vitest';
import type { FlatRun } from '../src/api/types';
import { shortenPaths } from '../src/data/messages';
import { buildTaskTree, countTasks, flattenTree, pickRun } from '../src/data/tree';
import { treeKeyAction } from '../src/data/treenav';
import { parseRoute, routeSearch } from '../src/hooks/useRoute';

const run = (id: string, task: string, sec: number, extra: Partial<FlatRun> = {}): FlatRun => ({
  id,
  task_id: task,
  agent: 'command',
  agent_name: 'uiagent',
  status: 'completed',
  exit_code: 0,
  start_time: `2026-01-01T00:00:${String(sec).padStart(2, '0')}Z`,
  end_time: `2026-01-01T00:01:${String(sec).padStart(2, '0')}Z`,
  ...extra,
});

describe('shortenPaths (FACT bodies relative to the project)', () => {
  it('cuts runs-tree paths to start at the project directory', () => {
    const body = 'source_task_bus: /srv/runs/proj/task-a/TASK-MESSAGE-BUS.md\n- latest_output_path: /srv/runs/proj/task-a/runs/r1/output.md';
    expect(shortenPaths(body, 'proj')).toBe('source_task_bus: task-a/TASK-MESSAGE-BUS.md\n- latest_output_path: task-a/runs/r1/output.md');
  });
  it('makes paths under the project root relative to it, and leaves other paths alone', () => {
    expect(shortenPaths('edited /home/u/app/src/x.ts and /etc/hosts', 'proj', '/home/u/app/')).toBe('edited src/x.ts and /etc/hosts');
    expect(shortenPaths('cwd=/home/u/app', 'proj', '/home/u/app')).toBe('cwd=.');
  });
  it('does not treat a path that merely starts with the root name as inside it', () => {
    expect(shortenPaths('see /home/u/application/a', 'proj', '/home/u/app')).toBe('see /home/u/application/a');
  });
});

describe('countTasks and pickRun', () => {
  const runs = [run('r1', 'parent', 1, { status: 'failed', exit_code: 1 }), run('r2', 'parent', 2, { previous_run_id: 'r1' }), run('c1', 'child', 3, { parent_run_id: 'r2' })];
  const tree = buildTaskTree(runs, [{ id: 'idle', project_id: 'p', status: 'idle', last_activity: '', run_count: 0, done: false }]);

  it('counts nested tasks (what the tree shows) like the summary cards do', () => {
    expect(tree.length).toBe(2); // the child task is nested under its parent
    expect(countTasks(tree)).toBe(3);
  });
  it('shows the named earlier run of a restart chain, else the latest run', () => {
    const parent = tree.find((t) => t.id === 'parent')!;
    expect(pickRun(parent, 'r1')?.id).toBe('r1');
    expect(pickRun(parent, undefined)?.id).toBe('r2');
    expect(pickRun(parent, 'gone')?.id).toBe('r2');
    expect(pickRun(undefined, 'r1')).toBeUndefined();
  });
});

describe('treeKeyAction', () => {
  const rows = [
    { depth: 0, hasChildren: true, expanded: true },
    { depth: 1, hasChildren: true, expanded: false },
    { depth: 1, hasChildren: false, expanded: false },
    { depth: 0, hasChildren: false, expanded: false },
  ];
  it('moves with Up/Down/Home/End within bounds', () => {
    expect(treeKeyAction(rows, 0, 'ArrowDown')).toEqual({ kind: 'move', index: 1 });
    expect(treeKeyAction(rows, 3, 'ArrowDown')).toEqual({ kind: 'move', index: 3 });
    expect(treeKeyAction(rows, 0, 'ArrowUp')).toEqual({ kind: 'move', index: 0 });
    expect(treeKeyAction(rows, 2, 'Home')).toEqual({ kind: 'move', index: 0 });
    expect(treeKeyAction(rows, 0, 'End')).toEqual({ kind: 'move', index: 3 });
  });
  it('opens with Right, closes or goes to the parent with Left, selects with Enter and Space', () => {
    expect(treeKeyAction(rows, 1, 'ArrowRight')).toEqual({ kind: 'toggle', index: 1 });
    expect(treeKeyAction(rows, 0, 'ArrowRight')).toEqual({ kind: 'move', index: 1 });
    expect(treeKeyAction(rows, 0, 'ArrowLeft')).toEqual({ kind: 'toggle', index: 0 });
    expect(treeKeyAction(rows, 2, 'ArrowLeft')).toEqual({ kind: 'move', index: 0 });
    expect(treeKeyAction(rows, 3, 'ArrowLeft')).toBeNull();
    expect(treeKeyAction(rows, 2, 'Enter')).toEqual({ kind: 'select', index: 2 });
    expect(treeKeyAction(rows, 2, ' ')).toEqual({ kind: 'select', index: 2 });
    expect(treeKeyAction(rows, 2, 'x')).toBeNull();
    expect(treeKeyAction([], 0, 'ArrowDown')).toBeNull();
  });
  it('agrees with the rows flattenTree produces', () => {
    const flat = flattenTree(buildTaskTree([run('a1', 'a', 1), run('a2', 'a', 2, { previous_run_id: 'a1' })]), new Map(), { text: '', status: 'all' }, 'a');
    expect(treeKeyAction(flat, 0, 'ArrowDown')).toEqual({ kind: 'move', index: 1 });
  });
});

describe('routes (a URL per project, task and run)', () => {
  it('round-trips project, task and run', () => {
    const r = { project: 'p 1', task: 'task-20260101-000000-x', run: '20260101-0000000000-1-1' };
    expect(parseRoute(routeSearch(r))).toEqual(r);
  });
  it('keeps the webhook link form and ignores a task without a project', () => {
    expect(parseRoute('?project=p&task=t')).toEqual({ project: 'p', task: 't', run: undefined });
    expect(parseRoute('?task=t&run=r')).toEqual({ project: undefined, task: undefined, run: undefined });
    expect(routeSearch({})).toBe('');
  });
});
