import { SortedRunsMemo, type RunRecord } from '@app/runner';
import type { RunInfo } from '@app/storage';

const record = (runId: string, startIso: string): RunRecord => ({
  runId,
  projectId: 'p',
  taskId: 't',
  dir: `/runs/p/t/runs/${runId}`,
  info: { run_id: runId, start_time: new Date(startIso) } as unknown as RunInfo,
});

describe('SortedRunsMemo (runs/flat order kept while the listing is unchanged)', () => {
  it('sorts by start time, and answers the same listing with the kept order as a fresh copy', () => {
    const memo = new SortedRunsMemo();
    const a = record('a', '2026-01-01T12:00:00Z');
    const b = record('b', '2026-01-01T11:00:00Z');
    const first = memo.sorted('p', [a, b]);
    expect(first.map((r) => r.runId)).toEqual(['b', 'a']);
    first.reverse();
    const again = memo.sorted('p', [{ ...a }, { ...b }]);
    expect(again.map((r) => r.runId)).toEqual(['b', 'a']);
    expect(again).not.toBe(first);
  });

  it('sorts again when one run-info object is new, or a run came or went', () => {
    const memo = new SortedRunsMemo();
    const a = record('a', '2026-01-01T12:00:00Z');
    const b = record('b', '2026-01-01T11:00:00Z');
    memo.sorted('p', [a, b]);
    const movedA = record('a', '2026-01-01T10:00:00Z');
    expect(memo.sorted('p', [movedA, b]).map((r) => r.runId)).toEqual(['a', 'b']);
    const c = record('c', '2026-01-01T09:00:00Z');
    expect(memo.sorted('p', [movedA, b, c]).map((r) => r.runId)).toEqual(['c', 'a', 'b']);
    expect(memo.sorted('p', [b]).map((r) => r.runId)).toEqual(['b']);
    expect(memo.sorted('q', [a, b]).map((r) => r.runId)).toEqual(['b', 'a']);
  });
});
