// The CLI's one error mapping (apps/cli/src/common/cli-errors.ts, reportError): both roots (the fast
// path and nest-commander's serviceErrorHandler) report what a command throws through it.
import { RunnerError } from '@app/runner';
import { StorageError } from '@app/storage';
import { WorktreeError } from '@app/worktree';
import { reportError, setJsonErrors } from '../../../apps/cli/src/common/cli-errors';

describe('reportError: the one mapping of thrown errors to the error line and exit code', () => {
  let written: string[];
  let write: jest.SpyInstance;
  beforeEach(() => {
    written = [];
    write = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    setJsonErrors(true);
  });
  afterEach(() => {
    write.mockRestore();
    setJsonErrors(false);
    process.exitCode = undefined;
  });

  const report = (err: unknown) => {
    reportError(err);
    return { code: process.exitCode, error: (JSON.parse(written.join('')) as { error: unknown }).error };
  };

  it("reports the runner's INVALID_INPUT and any lib's INVALID_ID as a usage error (code USAGE, exit 2)", () => {
    expect(report(new RunnerError('INVALID_INPUT', 'bad lease'))).toEqual({ code: 2, error: { code: 'USAGE', message: 'bad lease' } });
    written = [];
    expect(report(new StorageError('INVALID_ID', 'project ID is empty'))).toEqual({ code: 2, error: { code: 'USAGE', message: 'project ID is empty' } });
  });

  it("reports the worktree lib's INVALID_INPUT as a usage error and keeps its other codes", () => {
    expect(report(new WorktreeError('INVALID_INPUT', 'bad ref'))).toEqual({ code: 2, error: { code: 'USAGE', message: 'bad ref' } });
    written = [];
    expect(report(new WorktreeError('MERGE_CONFLICT', 'a.txt'))).toEqual({ code: 1, error: { code: 'MERGE_CONFLICT', message: 'a.txt' } });
  });

  it('keeps other lib codes and reports untyped errors as failures', () => {
    expect(report(new StorageError('NOT_FOUND', 'unknown project "p"'))).toEqual({ code: 2, error: { code: 'NOT_FOUND', message: 'unknown project "p"' } });
    written = [];
    expect(report(new RunnerError('TASK_LOCKED', 'locked'))).toEqual({ code: 1, error: { code: 'TASK_LOCKED', message: 'locked' } });
    written = [];
    expect(report(new Error('boom'))).toEqual({ code: 1, error: { code: 'FAILED', message: 'boom' } });
  });

  it('prints the plain line without --json', () => {
    setJsonErrors(false);
    reportError(new RunnerError('INVALID_INPUT', 'bad lease'));
    expect([written.join(''), process.exitCode]).toEqual(['Error: bad lease\n', 2]);
  });
});
