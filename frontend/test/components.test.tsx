// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { useState } from 'react';
import type { FlatRun, ProjectStats } from '../src/api/types';
import { ProjectList, StatsCards } from '../src/components/ProjectPanel';
import { RunTabs, type TabId } from '../src/components/RunTabs';
import { TaskTree } from '../src/components/TaskTree';
import { agentLabel } from '../src/components/RunDetail';
import { NewTaskDialog } from '../src/components/NewTaskDialog';

afterEach(cleanup);

const run = (id: string, task: string, sec: number, extra: Partial<FlatRun> = {}): FlatRun => ({
  id,
  task_id: task,
  agent: 'command',
  agent_name: 'reviewer',
  status: 'completed',
  exit_code: 0,
  start_time: `2026-01-01T00:00:${String(sec).padStart(2, '0')}Z`,
  end_time: `2026-01-01T00:01:${String(sec).padStart(2, '0')}Z`,
  ...extra,
});

const stats: ProjectStats = {
  project_id: 'p',
  total_tasks: 3,
  total_runs: 9,
  running_runs: 4,
  completed_runs: 5,
  failed_runs: 0,
  crashed_runs: 0,
  message_bus_files: 1,
  message_bus_total_bytes: 2048,
};

describe('summary cards and project row', () => {
  it('count what the tree shows, not the server stats', () => {
    render(<StatsCards stats={stats} runs={[run('r1', 'a', 1), run('r2', 'b', 2, { status: 'running' })]} tasks={2} />);
    const cards = screen.getByRole('list', { name: 'Project stats' });
    const value = (label: string) => within(cards).getByText(label).previousElementSibling?.textContent;
    expect(value('tasks')).toBe('2');
    expect(value('runs')).toBe('2');
    expect(value('running')).toBe('1');
    expect(value('bus size')).toMatch(/2(\.0)? KiB/);
  });

  it('shows the tree count on the selected project row and the server count on others', () => {
    const projects = [
      { id: 'p', last_activity: new Date().toISOString(), task_count: 3 },
      { id: 'q', last_activity: new Date().toISOString(), task_count: 1 },
    ];
    const onSelect = vi.fn();
    render(<ProjectList projects={projects} selected="p" selectedTaskCount={2} onSelect={onSelect} />);
    expect(screen.getByRole('link', { name: /^p\s*2 tasks · / }).getAttribute('aria-current')).toBe('page');
    expect(screen.getByRole('link', { name: /^q\s*1 task · / }).getAttribute('href')).toBe('?project=q');
    fireEvent.click(screen.getByRole('link', { name: /^q\s*1/ }));
    expect(onSelect).toHaveBeenCalledWith('q');
  });
});

describe('TaskTree', () => {
  const runs = [run('r1', 'task-a', 1, { status: 'failed', exit_code: 1 }), run('r2', 'task-a', 2, { previous_run_id: 'r1' }), run('b1', 'task-b', 3)];

  it('names the configured agent on run rows', () => {
    render(<TaskTree runs={runs} tasks={[]} selectedTaskId="task-a" lastOutput={new Map()} now={Date.now()} onSelectTask={() => {}} onSelectRun={() => {}} />);
    const row = document.querySelector('[data-key="r:r1"]')!;
    expect(row.querySelector('.agent')?.textContent).toBe('reviewer');
  });

  it('is operated from the keyboard: arrows move the active row, Right opens, Enter selects', () => {
    const onSelectRun = vi.fn();
    const onSelectTask = vi.fn();
    render(<TaskTree runs={runs} tasks={[]} selectedTaskId="task-a" lastOutput={new Map()} now={Date.now()} onSelectTask={onSelectTask} onSelectRun={onSelectRun} />);
    const tree = screen.getByRole('tree', { name: 'Task tree' });
    const activeKey = () => document.getElementById(tree.getAttribute('aria-activedescendant') ?? '')?.getAttribute('data-key');
    expect(activeKey()).toBe('t:task-a');
    fireEvent.keyDown(tree, { key: 'ArrowDown' });
    expect(activeKey()).toBe('r:r1');
    fireEvent.keyDown(tree, { key: 'Enter' });
    expect(onSelectRun).toHaveBeenCalledWith('task-a', 'r1');
    // Newest task first: task-b heads the tree.
    fireEvent.keyDown(tree, { key: 'Home' });
    expect(activeKey()).toBe('t:task-b');
    fireEvent.keyDown(tree, { key: ' ' });
    expect(onSelectTask).toHaveBeenCalledWith('task-b');
    fireEvent.keyDown(tree, { key: 'ArrowDown' });
    expect(activeKey()).toBe('t:task-a');
    // The restart r2 sits under r1: End reaches it, Left steps up to its parent.
    fireEvent.keyDown(tree, { key: 'End' });
    expect(activeKey()).toBe('r:r2');
    fireEvent.keyDown(tree, { key: 'ArrowLeft' });
    expect(activeKey()).toBe('r:r1');
    fireEvent.keyDown(tree, { key: 'ArrowLeft' });
    expect(document.querySelector('[data-key="r:r2"]')).toBeNull();
    fireEvent.keyDown(tree, { key: 'ArrowLeft' });
    expect(activeKey()).toBe('t:task-a');
    // Left on an open task closes it: its runs leave the tree; Right opens it again.
    fireEvent.keyDown(tree, { key: 'ArrowLeft' });
    expect(document.querySelector('[data-key="r:r1"]')).toBeNull();
    fireEvent.keyDown(tree, { key: 'ArrowRight' });
    expect(document.querySelector('[data-key="r:r1"]')).not.toBeNull();
  });
});

describe('RunTabs', () => {
  function Harness() {
    const [tab, setTab] = useState<TabId>('stdout');
    return (
      <RunTabs selected={tab} onSelect={setTab}>
        <p>content of {tab}</p>
      </RunTabs>
    );
  }

  it('exposes Ring tabs as an ARIA tablist and switches with clicks and arrow keys', () => {
    render(<Harness />);
    expect(screen.getByRole('tablist', { name: 'Run files' })).toBeTruthy();
    const tabs = screen.getAllByRole('tab');
    expect(tabs.map((t) => t.getAttribute('aria-label'))).toEqual(['stdout', 'output', 'stderr', 'TASK.md', 'run-info', 'diff']);
    expect(screen.getByRole('tab', { name: 'stdout' }).getAttribute('aria-selected')).toBe('true');
    expect(screen.getByRole('tabpanel').textContent).toBe('content of stdout');
    fireEvent.click(screen.getByRole('tab', { name: 'TASK.md' }));
    expect(screen.getByRole('tabpanel').textContent).toBe('content of task');
    fireEvent.keyDown(screen.getByRole('tab', { name: 'TASK.md' }), { key: 'ArrowRight' });
    expect(screen.getByRole('tab', { name: 'run-info' }).getAttribute('aria-selected')).toBe('true');
    fireEvent.keyDown(screen.getByRole('tab', { name: 'run-info' }), { key: 'ArrowLeft' });
    fireEvent.keyDown(screen.getByRole('tab', { name: 'TASK.md' }), { key: 'ArrowLeft' });
    expect(screen.getByRole('tabpanel').textContent).toBe('content of stderr');
  });
});

describe('agentLabel', () => {
  it('shows the configured name with its type when they differ', () => {
    expect(agentLabel({ agent: 'claude', agent_name: 'reviewer' })).toBe('reviewer (claude)');
    expect(agentLabel({ agent: 'claude', agent_name: 'claude' })).toBe('claude');
    expect(agentLabel({ agent: 'codex' })).toBe('codex');
  });
});

describe('NewTaskDialog (Ring Dialog)', () => {
  it('is a modal dialog that Escape closes from inside a field', () => {
    const onClose = vi.fn();
    render(<NewTaskDialog onClose={onClose} onCreated={() => {}} />);
    expect(screen.getByRole('dialog', { name: 'New task' }).getAttribute('aria-modal')).toBe('true');
    fireEvent.keyDown(screen.getByLabelText('Project'), { key: 'Escape' });
    expect(onClose).toHaveBeenCalledTimes(1);
  });
});
