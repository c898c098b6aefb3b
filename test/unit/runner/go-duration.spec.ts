import { formatGoDuration, parseDurationFlag } from '@app/runner';

describe('Go duration text', () => {
  it.each([
    [0, '0s'],
    [500, '500ms'],
    [1500, '1.5s'],
    [1000, '1s'],
    [30_000, '30s'],
    [300_000, '5m0s'],
    [1_800_000, '30m0s'],
    [7_200_000, '2h0m0s'],
    [5_430_500, '1h30m30.5s'],
    [0.25, '250µs'],
    [-1500, '-1.5s'],
  ])('formats %p ms as %s', (ms, text) => {
    expect(formatGoDuration(ms)).toBe(text);
  });

  it.each([
    ['30s', 30_000],
    ['1m30s', 90_000],
    ['250ms', 250],
    ['2h', 7_200_000],
    ['1.5s', 1500],
    ['0', 0],
    ['10', 10_000],
  ])('parses %s', (text, ms) => {
    expect(parseDurationFlag(text)).toBe(ms);
  });

  it.each(['', 'abc', '10x', '1m30', 's'])('rejects %p with a one-line error', (text) => {
    expect(() => parseDurationFlag(text, '--restart-delay')).toThrow(/^invalid --restart-delay ".*": use a Go duration/);
  });
});
