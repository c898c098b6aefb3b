// The API's one error mapping (apps/api/src/common/error.filter.ts, toEnvelope): each lib's error
// class and code becomes one HTTP status and envelope code.
import { RunnerError } from '@app/runner';
import { WorktreeError, type WorktreeErrorCode } from '@app/worktree';
import { toEnvelope } from '../../../apps/api/src/common/error.filter';

describe('toEnvelope: lib errors to HTTP', () => {
  it.each<[WorktreeErrorCode, number, string]>([
    ['INVALID_INPUT', 400, 'BAD_REQUEST'],
    ['NOT_FOUND', 404, 'NOT_FOUND'],
    ['MERGE_CONFLICT', 409, 'CONFLICT'],
    ['MERGE_FAILED', 409, 'CONFLICT'],
    ['WORKTREE', 500, 'INTERNAL'],
  ])('WorktreeError %s is %d %s', (code, status, envelopeCode) => {
    const { status: got, body } = toEnvelope(new WorktreeError(code, 'detail'));
    expect([got, body.error.code]).toEqual([status, envelopeCode]);
  });

  it('keeps the runner’s mapping (TASK_LOCKED is a 409)', () => {
    expect(toEnvelope(new RunnerError('TASK_LOCKED', 'locked')).status).toBe(409);
  });
});
