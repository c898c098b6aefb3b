import { describe, expect, it } from 'vitest';
import { EMPTY_TASK_OPTIONS, taskOptionFields } from '../src/data/taskoptions';

describe('New task dialog options (#30.11)', () => {
  it('sends nothing extra when no option is filled in', () => {
    expect(taskOptionFields(EMPTY_TASK_OPTIONS)).toEqual({ fields: {} });
  });

  it('maps repository, worktree and budget to the POST /api/v1/tasks fields', () => {
    const form = { projectRoot: ' ~/src/app ', worktree: true, base: 'develop', paths: 'src, docs\nsrc', maxTokens: '50000', maxCostUsd: '$2.50', maxWallTime: '30m', doneCriteria: '', doneTimeout: '' };
    expect(taskOptionFields(form)).toEqual({
      fields: { project_root: '~/src/app', isolation: 'worktree', base: 'develop', paths: ['src', 'docs'], max_tokens: 50000, max_cost_usd: 2.5, max_wall_time: '30m' },
    });
  });

  it('leaves base and paths out without a worktree, and needs a repository for one', () => {
    expect(taskOptionFields({ ...EMPTY_TASK_OPTIONS, projectRoot: '/r', base: 'x', paths: 'a' })).toEqual({ fields: { project_root: '/r' } });
    expect(taskOptionFields({ ...EMPTY_TASK_OPTIONS, worktree: true })).toEqual({ error: 'A worktree needs the working repository.' });
  });

  it('refuses budgets that are not positive numbers', () => {
    expect(taskOptionFields({ ...EMPTY_TASK_OPTIONS, maxTokens: '1.5' })).toEqual({ error: 'Max tokens must be a positive whole number.' });
    expect(taskOptionFields({ ...EMPTY_TASK_OPTIONS, maxTokens: '0' })).toEqual({ error: 'Max tokens must be a positive whole number.' });
    expect(taskOptionFields({ ...EMPTY_TASK_OPTIONS, maxCostUsd: 'ten' })).toEqual({ error: 'Max cost must be a positive amount in US dollars.' });
  });
});
