// The one task-status rule and the one status-filter table (issue #32), used by run-agent status,
// run-agent list and the server's task summary.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { summarizeTask, TASK_STATUS_FILTER_NAMES, taskStatusFilter } from '@app/runner';

const base = { status: 'completed', running: false, openQuestions: 0 };

describe('summarizeTask: the task-status rule', () => {
  it('keeps the status the runs give when nothing overrides it', () => {
    expect(summarizeTask(base)).toEqual({ status: 'completed' });
    expect(summarizeTask({ ...base, status: '-' })).toEqual({ status: '-' });
  });

  it('open questions make it needs_input, even while a run is running', () => {
    expect(summarizeTask({ ...base, openQuestions: 2 })).toEqual({ status: 'needs_input', by: 'needs_input' });
    expect(summarizeTask({ ...base, status: 'running', running: true, openQuestions: 1, hold: 'paused' })).toEqual({ status: 'needs_input', by: 'needs_input' });
  });

  it('a hold shows unless a run is running or a question is open', () => {
    expect(summarizeTask({ ...base, hold: 'rate_limited' })).toEqual({ status: 'rate_limited', by: 'hold' });
    expect(summarizeTask({ ...base, status: 'running', running: true, hold: 'budget_exceeded' })).toEqual({ status: 'running' });
  });

  it('a corrupt record wins over everything but a running run', () => {
    expect(summarizeTask({ ...base, openQuestions: 1, hold: 'paused', corruptReason: 'bad yaml' })).toEqual({ status: 'corrupt', by: 'corrupt' });
    expect(summarizeTask({ ...base, status: 'running', running: true, corruptReason: 'bad yaml' })).toEqual({ status: 'running' });
  });
});

describe('the status-filter table', () => {
  it('starts with running and knows every name the three listings accepted', () => {
    expect(TASK_STATUS_FILTER_NAMES[0]).toBe('running');
    const before = [
      // run-agent status
      'running', 'active', 'completed', 'failed', 'stopped', 'cancelled', 'unknown', 'queued', 'blocked', 'needs_input', 'rate_limited', 'paused', 'budget_exceeded', 'corrupt', 'done', 'all_finished', 'pending',
      // run-agent list and the server's ?status=
      'partial_failure', 'postponed',
    ];
    expect([...TASK_STATUS_FILTER_NAMES].sort()).toEqual([...new Set(before)].sort());
  });

  it('matches on the shown status, done and all_finished on DONE; names are trimmed and case-insensitive', () => {
    const t = (status: string, done = false) => ({ status, done });
    expect(taskStatusFilter('active')!(t('running'))).toBe(true);
    expect(taskStatusFilter(' Running ')!(t('running'))).toBe(true);
    expect(taskStatusFilter('postponed')!(t('queued'))).toBe(true);
    expect(taskStatusFilter('done')!(t('all_finished', true))).toBe(true);
    expect(taskStatusFilter('all_finished')!(t('completed'))).toBe(false);
    expect(taskStatusFilter('pending')!(t('-'))).toBe(true);
    expect(taskStatusFilter('failed')!(t('partial_failure'))).toBe(false);
    expect(taskStatusFilter('nope')).toBeUndefined();
    expect(taskStatusFilter('constructor')).toBeUndefined();
  });

  it('no listing keeps a status rule or filter table of its own', () => {
    const root = join(__dirname, '..', '..', '..');
    for (const file of ['apps/api/src/projects/project-data.service.ts', 'apps/api/src/projects/project-tasks.controller.ts', 'libs/runner/src/status/task-rows.ts', 'libs/runner/src/status/list-rows.ts']) {
      const text = readFileSync(join(root, file), 'utf8');
      expect([file, text.match(/= 'needs_input'|status = usage\.hold|= hold\b|'corrupt';|STATUS_FILTERS\s*[:=]/g)]).toEqual([file, null]);
      expect([file, /summarizeTask|taskStatusFilter/.test(text)]).toEqual([file, true]);
    }
  });
});
