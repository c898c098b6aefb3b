// @vitest-environment jsdom
import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Schedule } from '../api/types';
import { nextFireText, outcomeText, recentRuns } from '../data/schedules';
import { SchedulesPanel } from './SchedulesPanel';

const NOW = Date.parse('2026-11-28T10:00:00Z');
const nightly: Schedule = {
  name: 'nightly',
  cron: '0 3 * * *',
  timezone: 'Europe/Berlin',
  missed: 'skip',
  max_missed: 10,
  concurrency: 'skip',
  project_id: 'ops',
  next_fire: '2026-11-28T10:04:10Z',
  last_slot: '2026-11-27T02:00:00Z',
  history: [
    { slot: '2026-11-26T02:00:00Z', fired_at: '2026-11-26T02:00:00Z', task_id: 'task-20261126-020000-nightly', project_id: 'ops', outcome: 'started' },
    { slot: '2026-11-27T02:00:00Z', fired_at: '2026-11-27T02:00:01Z', outcome: 'skipped_running' },
  ],
};

afterEach(() => vi.restoreAllMocks());

describe('schedules data', () => {
  it('says when the next fire is, and words each outcome', () => {
    expect(nextFireText(nightly, NOW)).toBe('in 4m 10s');
    expect(nextFireText({ next_fire: '2026-11-28T09:00:00Z' }, NOW)).toBe('due');
    expect(nextFireText({}, NOW)).toBe('—');
    expect(outcomeText({ fired_at: '', outcome: 'failed', error: 'agent "x" not found' })).toBe('failed: agent "x" not found');
    expect(outcomeText({ fired_at: '', outcome: 'skipped_missed' })).toBe('skipped (missed while down)');
    expect(recentRuns(nightly).map((r) => r.outcome)).toEqual(['skipped_running', 'started']);
  });
});

describe('SchedulesPanel', () => {
  it('lists each schedule with its next fire time and history, newest first', () => {
    render(<SchedulesPanel schedules={[nightly]} now={NOW} notify={() => undefined} onFired={() => undefined} onSelect={() => undefined} />);
    const region = screen.getByRole('region', { name: 'Schedules' });
    expect(region.textContent).toContain('Schedules (1)');
    expect(region.querySelector('.schedule-next')?.textContent).toBe('next in 4m 10s');
    const runs = [...region.querySelectorAll('.schedule-run')].map((li) => li.className);
    expect(runs).toEqual(['schedule-run outcome-skipped_running', 'schedule-run outcome-started']);
  });

  it('fires one through POST /api/v1/schedules/<name>/fire and reports the task', async () => {
    const fetchMock = vi.spyOn(globalThis, 'fetch').mockResolvedValue(new Response(JSON.stringify({ schedule: 'nightly', run: { fired_at: '2026-11-28T10:00:00Z', task_id: 'task-x', project_id: 'ops', outcome: 'started' } }), { status: 201 }));
    const notify = vi.fn();
    const onFired = vi.fn();
    render(<SchedulesPanel schedules={[nightly]} now={NOW} notify={notify} onFired={onFired} onSelect={() => undefined} />);
    await userEvent.click(screen.getByRole('button', { name: 'Fire now: nightly' }));
    await waitFor(() => expect(onFired).toHaveBeenCalled());
    expect(fetchMock.mock.calls[0][0]).toBe('/api/v1/schedules/nightly/fire');
    expect(fetchMock.mock.calls[0][1]?.method).toBe('POST');
    expect(notify).toHaveBeenCalledWith('nightly: started (task-x)', false);
  });

  it('shows nothing without schedules', () => {
    const { container } = render(<SchedulesPanel schedules={[]} now={NOW} notify={() => undefined} onFired={() => undefined} onSelect={() => undefined} />);
    expect(container.textContent).toBe('');
  });
});
