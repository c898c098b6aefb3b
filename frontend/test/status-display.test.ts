import { describe, expect, it } from 'vitest';
import type { FlatRun } from '../src/api/types';
import { normalizeStatus, runCounts, runDisplayStatus, shownExitCode } from '../src/data/status';

const run = (over: Partial<FlatRun>): FlatRun => ({ id: 'r', task_id: 't', agent: 'command', status: 'completed', exit_code: 0, start_time: '2026-01-01T00:00:00Z', ...over });

describe('issue #12: stopped, cancelled and running runs in the dashboard', () => {
  it('shows the added display_status over upstream status', () => {
    expect(runDisplayStatus(run({ status: 'failed', exit_code: 143, display_status: 'stopped' }))).toBe('stopped');
    expect(runDisplayStatus(run({ status: 'failed', exit_code: 143, display_status: 'cancelled' }))).toBe('cancelled');
    expect(runDisplayStatus(run({ status: 'failed', exit_code: 1 }))).toBe('failed');
    expect(normalizeStatus('cancelled')).toBe('cancelled');
    expect(normalizeStatus('stopped')).toBe('stopped');
  });

  it('issue #29: a run or task whose record cannot be parsed shows as corrupt, not unknown', () => {
    expect(normalizeStatus('corrupt')).toBe('corrupt');
    expect(runDisplayStatus(run({ status: 'corrupt', display_status: 'corrupt' }))).toBe('corrupt');
  });

  it('shows no exit code while a run is running', () => {
    expect(shownExitCode(run({ status: 'running', exit_code: -1 }))).toBe('');
    expect(shownExitCode(run({ status: 'failed', exit_code: 143 }))).toBe('143');
    expect(shownExitCode(run({ status: 'completed', exit_code: 0 }))).toBe('0');
  });

  it('counts the summary cards from the same runs as the tree', () => {
    const runs = [
      run({ id: '1', status: 'running', exit_code: -1 }),
      run({ id: '2', status: 'stopped' }),
      run({ id: '3', status: 'cancelled' }),
      run({ id: '4', status: 'failed' }),
      run({ id: '5', status: 'completed' }),
    ];
    expect(runCounts(runs)).toEqual({ runs: 5, running: 1, completed: 1, failed: 1, stopped: 2 });
  });
});
