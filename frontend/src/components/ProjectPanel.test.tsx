// @vitest-environment jsdom
import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { ProjectList, StatsCards } from './ProjectPanel';

describe('ProjectList', () => {
  const projects = [
    { id: 'old', last_activity: '2020-01-01T00:00:00Z', task_count: 1 },
    { id: 'idle', last_activity: '0001-01-01T00:00:00Z', task_count: 0 },
    { id: 'fresh', last_activity: new Date().toISOString(), task_count: 3, project_root: '/src/fresh' },
  ];

  it('orders projects by last activity, newest first, and marks the selected one', () => {
    render(<ProjectList projects={projects} selected="old" onSelect={() => undefined} />);
    // project rows are links with real hrefs (deep links); the selected one is the current page
    const buttons = within(screen.getByRole('navigation', { name: 'Projects' })).getAllByRole('link');
    expect(buttons.map((b) => b.querySelector('.project-id')!.textContent)).toEqual(['fresh', 'old', 'idle']);
    expect(buttons.map((b) => b.getAttribute('aria-current'))).toEqual([null, 'page', null]);
    expect(buttons[0].textContent).toContain('3 tasks · just now');
    expect(buttons[2].textContent).toContain('0 tasks · no activity');
    expect(buttons[0].title).toBe('/src/fresh');
  });

  it('reports the project the user picks', async () => {
    const picked: string[] = [];
    render(<ProjectList projects={projects} onSelect={(id) => picked.push(id)} />);
    await userEvent.click(screen.getByText('idle'));
    expect(picked).toEqual(['idle']);
  });
});

describe('StatsCards', () => {
  it('renders nothing without stats', () => {
    const { container } = render(<StatsCards />);
    expect(container.innerHTML).toBe('');
  });

  it('counts crashed runs as failed and shows the bus size', () => {
    render(
      <StatsCards
        stats={{ project_id: 'p', total_tasks: 2, total_runs: 5, running_runs: 1, completed_runs: 2, failed_runs: 1, crashed_runs: 1, message_bus_files: 2, message_bus_total_bytes: 2048 }}
      />,
    );
    const value = (label: string) => screen.getByText(label).parentElement!.querySelector('.stat-value')!.textContent;
    expect([value('tasks'), value('runs'), value('running'), value('completed'), value('failed')]).toEqual(['2', '5', '1', '2', '2']);
    expect(value('bus size')).toBe('2.0 KiB');
  });
});
