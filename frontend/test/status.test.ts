import { describe, expect, it } from 'vitest';
import type { FlatRun } from '../src/api/types';
import { deriveTaskStatus, normalizeStatus } from '../src/data/status';
import { heartbeatColour, FRESH_MS, STALE_MS } from '../src/data/heartbeat';
import { parseTime, formatDuration, formatBytes } from '../src/data/time';
import { generateTaskId, parseDependencies, slugify, TASK_ID_PATTERN } from '../src/data/taskid';

const r = (id: string, status: string, start: string): FlatRun => ({ id, task_id: 't', agent: 'a', status, exit_code: 0, start_time: start });

describe('status', () => {
  it('normalizes run and task vocabularies', () => {
    expect(normalizeStatus('all_finished')).toBe('completed');
    expect(normalizeStatus('partial_failure')).toBe('running');
    expect(normalizeStatus('-')).toBe('idle');
    expect(normalizeStatus('postponed')).toBe('queued');
    expect(normalizeStatus('weird')).toBe('unknown');
    expect(normalizeStatus(undefined)).toBe('idle');
  });

  it('derives task status: running wins, else the latest run', () => {
    expect(deriveTaskStatus([])).toBe('idle');
    expect(deriveTaskStatus([], true)).toBe('completed');
    expect(deriveTaskStatus([r('1', 'failed', '2026-01-01T00:00:00Z'), r('2', 'running', '2026-01-01T00:00:01Z')])).toBe('running');
    expect(deriveTaskStatus([r('2', 'completed', '2026-01-01T00:00:05Z'), r('1', 'failed', '2026-01-01T00:00:01Z')])).toBe('completed');
    expect(deriveTaskStatus([r('1', 'completed', '2026-01-01T00:00:01Z'), r('2', 'failed', '2026-01-01T00:00:05Z')])).toBe('failed');
    expect(deriveTaskStatus([r('1', 'failed', '2026-01-01T00:00:01Z')], true)).toBe('failed');
  });
});

describe('heartbeat', () => {
  it('is green while output is fresh, yellow when quiet, red when stale', () => {
    expect(heartbeatColour(1000, 1000)).toBe('green');
    expect(heartbeatColour(0, FRESH_MS)).toBe('green');
    expect(heartbeatColour(0, FRESH_MS + 1)).toBe('yellow');
    expect(heartbeatColour(0, STALE_MS)).toBe('yellow');
    expect(heartbeatColour(0, STALE_MS + 1)).toBe('red');
  });
});

describe('time helpers', () => {
  it('treats the Go zero time as absent', () => {
    expect(parseTime('0001-01-01T00:00:00Z')).toBeUndefined();
    expect(parseTime(undefined)).toBeUndefined();
    expect(parseTime('garbage')).toBeUndefined();
    expect(parseTime('2026-01-01T00:00:00Z')).toBe(Date.UTC(2026, 0, 1));
  });
  it('formats durations and sizes', () => {
    expect(formatDuration(5_400)).toBe('5s');
    expect(formatDuration(125_000)).toBe('2m 5s');
    expect(formatDuration(3_720_000)).toBe('1h 2m');
    expect(formatBytes(10)).toBe('10 B');
    expect(formatBytes(2048)).toBe('2.0 KiB');
  });
});

describe('task ids', () => {
  it('generates task-YYYYMMDD-HHMMSS-<slug> ids that pass the storage rule', () => {
    const id = generateTaskId('Fix the login bug, please!', new Date(Date.UTC(2026, 1, 3, 4, 5, 6)));
    expect(id).toBe('task-20260203-040506-fix-the-login-bug-please');
    expect(TASK_ID_PATTERN.test(id)).toBe(true);
    expect(TASK_ID_PATTERN.test(generateTaskId('!!', new Date()))).toBe(true);
    expect(TASK_ID_PATTERN.test(generateTaskId('a'.repeat(80), new Date()))).toBe(true);
  });
  it('slugifies to at most 30 characters', () => {
    expect(slugify('one two three four five six seven eight').length).toBeLessThanOrEqual(30);
    expect(slugify('')).toBe('task');
  });
  it('parses dependency lists', () => {
    expect(parseDependencies(' task-a, task-b\ntask-a  ')).toEqual(['task-a', 'task-b']);
    expect(parseDependencies('')).toEqual([]);
  });
});
