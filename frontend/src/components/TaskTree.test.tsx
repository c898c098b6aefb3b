// @vitest-environment jsdom
import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { FlatRun, TaskListItem } from '../api/types';
import { TaskTree } from './TaskTree';

const NOW = Date.parse('2026-01-01T00:10:00Z');
const A = 'task-20260101-000000-alpha';
const B = 'task-20260101-000000-beta';

const runs: FlatRun[] = [
  { id: 'r-a1', task_id: A, agent: 'claude', status: 'completed', exit_code: 0, start_time: '2026-01-01T00:00:00Z', end_time: '2026-01-01T00:01:00Z' },
  { id: 'r-b1', task_id: B, agent: 'codex', status: 'failed', exit_code: 1, start_time: '2026-01-01T00:02:00Z', end_time: '2026-01-01T00:03:00Z' },
  { id: 'r-b2', task_id: B, agent: 'codex', status: 'running', exit_code: -1, start_time: '2026-01-01T00:09:50Z', end_time: '0001-01-01T00:00:00Z', previous_run_id: 'r-b1' },
];
const task = (id: string, status: string): TaskListItem => ({ id, project_id: 'p', status, last_activity: '2026-01-01T00:09:50Z', run_count: 1, done: status === 'completed' });
const tasks = [task(A, 'completed'), task(B, 'running')];

function renderTree(selected: { task?: string; run?: string } = {}) {
  const picked: string[] = [];
  render(
    <TaskTree
      runs={runs}
      tasks={tasks}
      selectedTaskId={selected.task}
      selectedRunId={selected.run}
      lastOutput={new Map([['r-b2', NOW - 2_000]])}
      now={NOW}
      onSelectTask={(t) => picked.push(`task ${t}`)}
      onSelectRun={(t, r) => picked.push(`run ${t} ${r}`)}
    />,
  );
  return picked;
}

const taskRows = () => screen.getAllByRole('treeitem').map((el) => el.getAttribute('data-key')).filter((k) => k?.startsWith('t:'));

describe('TaskTree', () => {
  it('lists every task of the project', () => {
    renderTree();
    expect(taskRows()).toEqual(expect.arrayContaining([`t:${A}`, `t:${B}`]));
    expect(taskRows()).toHaveLength(2);
  });

  // The status filter is a Ring UI Select whose option list needs real layout: it is driven in
  // Chromium by test/e2e/ui/dashboard.e2e-spec.ts ("filters the tree by text and status").

  it('the text filter hides tasks that do not match, and says when nothing does', async () => {
    renderTree();
    await userEvent.type(screen.getByLabelText('Filter tasks'), 'beta');
    expect(taskRows()).toEqual([`t:${B}`]);
    await userEvent.clear(screen.getByLabelText('Filter tasks'));
    await userEvent.type(screen.getByLabelText('Filter tasks'), 'no-such-task');
    expect(screen.queryAllByRole('treeitem')).toHaveLength(0);
    expect(screen.getByText('No task matches the filter.')).toBeTruthy();
  });

  it('shows a fresh heartbeat on the running run of the selected task, and reports clicks', async () => {
    const picked = renderTree({ task: B });
    const running = screen.getAllByRole('treeitem').find((el) => el.getAttribute('data-key') === 'r:r-b2');
    expect(running).toBeDefined();
    expect(within(running!).getByRole('img', { name: /output is fresh/ }).getAttribute('data-heartbeat')).toBe('green');
    await userEvent.click(within(running!).getByText(/r-b2/));
    await userEvent.click(screen.getAllByRole('treeitem').find((el) => el.getAttribute('data-key') === `t:${A}`)!.querySelector('.task-id') ?? screen.getByText(A));
    expect(picked).toEqual([`run ${B} r-b2`, `task ${A}`]);
  });
});
