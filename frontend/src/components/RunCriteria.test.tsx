// @vitest-environment jsdom
import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { RunCriteria } from './RunCriteria';
import { taskOptionFields, EMPTY_TASK_OPTIONS } from '../data/taskoptions';

describe('RunCriteria', () => {
  it('shows each command, the failure reason and the output tail of a failing one', () => {
    render(
      <RunCriteria
        criteria={{
          passed: false,
          reason: 'criterion "npm test" failed: exit code 1',
          checked_at: '2026-11-28T10:00:00Z',
          results: [
            { command: 'npm run lint', exit_code: 0, passed: true, duration_ms: 12 },
            { command: 'npm test', exit_code: 1, passed: false, duration_ms: 340, output_tail: 'not ok 1 - sum adds' },
          ],
        }}
      />,
    );
    const region = screen.getByRole('region', { name: 'Completion criteria' });
    expect(region.querySelector('h4')?.textContent).toBe('Completion criteria: failed');
    expect(region.querySelector('.criteria-reason')?.textContent).toBe('criterion "npm test" failed: exit code 1');
    const items = [...region.querySelectorAll('li')].map((li) => li.textContent);
    expect(items[0]).toBe('npm run lint — passed (12 ms)');
    expect(items[1]).toBe('npm test — exit 1 (340 ms)not ok 1 - sum adds');
  });
});

describe('new task form: completion criteria fields', () => {
  it('sends one command per non-empty line and the timeout; a timeout alone is refused', () => {
    expect(taskOptionFields({ ...EMPTY_TASK_OPTIONS, doneCriteria: ' npm test \n\n node --test \n', doneTimeout: '5m' })).toEqual({
      fields: { done_criteria: ['npm test', 'node --test'], done_criteria_timeout: '5m' },
    });
    expect(taskOptionFields({ ...EMPTY_TASK_OPTIONS, doneCriteria: '  \n' })).toEqual({ fields: {} });
    expect(taskOptionFields({ ...EMPTY_TASK_OPTIONS, doneTimeout: '5m' })).toEqual({ error: 'A criteria timeout needs at least one completion criterion.' });
  });
});
