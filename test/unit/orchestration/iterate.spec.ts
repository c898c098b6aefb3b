import { formatIterateSummary, iterateSubTaskId, iterateVerdict } from '@app/orchestration';

describe('iterate helpers', () => {
  it('reads verdicts as whole words, approval first', () => {
    expect(iterateVerdict('Review: APPROVED')).toBe('pass');
    expect(iterateVerdict('all tests pass')).toBe('pass');
    expect(iterateVerdict('approved, although one check FAILED before')).toBe('pass');
    expect(iterateVerdict('CHANGES_REQUESTED: add tests')).toBe('fail');
    expect(iterateVerdict('build failed')).toBe('fail');
    expect(iterateVerdict('BYPASS the PASSWORD check')).toBe('unknown');
    expect(iterateVerdict('')).toBe('unknown');
  });

  it('derives sub-task ids and refuses ids that would become invalid', () => {
    const at = new Date(2026, 0, 2, 3, 4, 5);
    expect(iterateSubTaskId('task-20260101-000000-feat', 'impl-iter1', at)).toBe('task-20260101-000000-feat-impl-iter1-030405');
    expect(() => iterateSubTaskId(`task-20260101-000000-${'a'.repeat(40)}`, 'review-iter3', at)).toThrow(/too long for iterate sub-tasks/);
  });

  it('formats ITERATE-SUMMARY.md', () => {
    const text = formatIterateSummary('passed', [
      { iteration: 1, implTask: 'i1', reviewTask: 'r1', verdict: 'fail' },
      { iteration: 2, implTask: 'i2', reviewTask: 'r2', verdict: 'pass' },
    ]);
    expect(text).toBe(
      '# Iterate Summary\n\noutcome: passed\n\n| iteration | impl_run | review_run | verdict |\n|-----------|----------|------------|---------|\n| 1 | i1 | r1 | fail |\n| 2 | i2 | r2 | pass |\n',
    );
  });
});
