import { lastTextLines as lastLines, selectFlatRuns, type RunRecord } from '@app/runner';
import { sseSettings } from '../../../apps/api/src/common/api-context';
import { formatTime, goDurationSeconds, parseGoDurationOrUndefined as parseGoDuration } from '../../../apps/api/src/common/go-format';
import { sanitize } from '../../../apps/api/src/security/audit-log.service';
import { isAuthExempt, keyMatches } from '../../../apps/api/src/security/request-hooks';
import { formatFanInCursor, parseFanInCursor, parseRunCursor } from '@app/streams';
import { ZERO_TIME } from '@app/storage';

describe('API helpers', () => {
  it('renders times like Go (trailing zeros trimmed, zero time literal) and durations', () => {
    expect(formatTime(new Date('2026-02-23T20:00:00.120Z'))).toBe('2026-02-23T20:00:00.12Z');
    expect(formatTime(new Date('2026-02-23T20:00:00.000Z'))).toBe('2026-02-23T20:00:00Z');
    expect(formatTime(ZERO_TIME)).toBe('0001-01-01T00:00:00Z');
    expect([0, 45, 90, 7205].map(goDurationSeconds)).toEqual(['0s', '45s', '1m30s', '2h0m5s']);
    expect(parseGoDuration('1h30m')).toBe(5400000);
    expect(parseGoDuration('168h')).toBe(168 * 3600000);
    expect(parseGoDuration('7d')).toBeUndefined();
    expect(parseGoDuration('-5m')).toBeUndefined();
  });

  it('parses run cursors in every accepted spelling and fan-in cursors', () => {
    expect(parseRunCursor('12')).toEqual({ s: 12, e: 12 });
    expect(parseRunCursor('s=3;e=4')).toEqual({ s: 3, e: 4 });
    expect(parseRunCursor('stdout:5|stderr:6')).toEqual({ s: 5, e: 6 });
    expect(parseRunCursor('out=7,junk,err=1')).toEqual({ s: 7, e: 1 });
    expect(parseRunCursor(undefined)).toEqual({ s: 0, e: 0 });
    const map = new Map([
      ['20260101-1200000000-1-1', { s: 3, e: 0 }],
      ['20260101-1200000000-1-2', { s: 1, e: 2 }],
    ]);
    const text = formatFanInCursor(map);
    expect(text).toBe('20260101-1200000000-1-1:s=3;e=0/20260101-1200000000-1-2:s=1;e=2');
    expect(parseFanInCursor(text)).toEqual(map);
    expect(parseFanInCursor('garbage')).toEqual(new Map());
  });

  it('keeps the last N lines', () => {
    expect(lastLines('a\nb\nc\n', 2)).toBe('b\nc\n');
    expect(lastLines('a\nb\nc', 1)).toBe('c');
    expect(lastLines('a\n', 5)).toBe('a\n');
  });

  it('redacts secrets from audit payloads', () => {
    expect(sanitize({ api_key: 'x', nested: { 'Refresh-Token': 'y' }, note: 'password: hunter2', list: ['ghp_abcdefghij123'] })).toEqual({
      api_key: '[REDACTED]',
      nested: { 'Refresh-Token': '[REDACTED]' },
      note: 'password=[REDACTED]',
      list: ['[REDACTED]'],
    });
    expect((sanitize('x'.repeat(5000)) as string).endsWith('...[TRUNCATED]')).toBe(true);
  });

  it('compares keys exactly and knows the exempt paths', () => {
    expect(keyMatches('abc', 'abc')).toBe(true);
    expect(keyMatches('abd', 'abc')).toBe(false);
    expect(keyMatches('abcd', 'abc')).toBe(false);
    expect(keyMatches(undefined, 'abc')).toBe(false);
    // [matched route pattern, raw path]
    const open: [string, string][] = [['/healthz', '/healthz'], ['/api/v1/health', '/api/v1/health'], ['/api/v1/version', '/api/v1/version'], ['/', '/'], ['/*', '/assets/x.js'], ['/ui/', '/ui/'], ['/*', '/logo.svg']];
    for (const [route, raw] of open) expect([route, raw, isAuthExempt('GET', route, raw)]).toEqual([route, raw, true]);
    expect(isAuthExempt('GET', '/metrics', '/metrics')).toBe(false);
    expect(isAuthExempt('GET', '/metrics', '/metrics', { metricsPublic: true })).toBe(true);
    expect(isAuthExempt('GET', '/api/projects', '/api/projects')).toBe(false);
    expect(isAuthExempt('GET', '/api/projects', '/%61pi/projects')).toBe(false);
    expect(isAuthExempt('GET', undefined, '/nowhere')).toBe(false);
    for (const raw of ['/ui/../api/projects', '/ui/%2e%2e/x', '//x', '/a/./b', '/API/projects', '/%41pi/projects', '/%E0%A4%A']) {
      expect([raw, isAuthExempt('GET', '/*', raw)]).toEqual([raw, false]);
    }
    expect(isAuthExempt('GET', '/*', '/metrics/', { isApiPath: (p) => p === '/metrics/' })).toBe(false);
    expect(isAuthExempt('OPTIONS', '/api/projects', '/api/projects')).toBe(true);
    // an HTTP trigger has its own token (libs/triggers): only its POST goes without the API key
    expect(isAuthExempt('POST', '/api/v1/triggers/:name', '/api/v1/triggers/deploy')).toBe(true);
    expect(isAuthExempt('GET', '/api/v1/triggers/:name', '/api/v1/triggers/deploy')).toBe(false);
    // the GitHub forge route checks GitHub's signature itself
    expect(isAuthExempt('POST', '/api/v1/forge/github', '/api/v1/forge/github')).toBe(true);
    expect(isAuthExempt('GET', '/api/v1/forge/github', '/api/v1/forge/github')).toBe(false);
    expect(isAuthExempt('POST', '/api/v1/schedules/:name/fire', '/api/v1/schedules/x/fire')).toBe(false);
  });

  it('takes SSE tuning from api.sse with defaults for 0', () => {
    expect(sseSettings(undefined)).toEqual({ pollIntervalMs: 500, discoveryIntervalMs: 1000, heartbeatIntervalMs: 30000, maxClientsPerRun: 10 });
    const cfg = { api: { sse: { poll_interval_ms: 0, discovery_interval_ms: 200, heartbeat_interval_s: 5, max_clients_per_run: 3 } } };
    expect(sseSettings(cfg as never)).toEqual({ pollIntervalMs: 500, discoveryIntervalMs: 200, heartbeatIntervalMs: 5000, maxClientsPerRun: 3 });
  });

  it('selects flat runs along parent and previous chains', () => {
    const run = (id: string, task: string, status: string, extra: Record<string, string> = {}, start = 0): RunRecord =>
      ({ runId: id, taskId: task, projectId: 'p', dir: '', info: { run_id: id, task_id: task, status, start_time: new Date(start), end_time: ZERO_TIME, ...extra } }) as unknown as RunRecord;
    const runs = [
      run('a1', 'A', 'completed', {}, 1),
      run('b1', 'B', 'failed', { parent_run_id: 'a1' }, 2),
      run('b2', 'B', 'running', { parent_run_id: 'a1', previous_run_id: 'b1' }, 3),
      run('c1', 'C', 'completed', {}, 4),
      run('b3', 'B', 'completed', { parent_run_id: 'b2' }, 5),
    ];
    const ids = (q: Parameters<typeof selectFlatRuns>[1]) => selectFlatRuns(runs, q).map((r) => r.runId);
    expect(ids({ activeOnly: false, limit: 0 })).toEqual(['a1', 'b1', 'b2', 'c1', 'b3']);
    expect(ids({ activeOnly: true, limit: 0 })).toEqual(['a1', 'b1', 'b2', 'b3']);
    expect(ids({ activeOnly: false, selectedTask: 'C', limit: 1 })).toEqual(['c1']);
  });
});
