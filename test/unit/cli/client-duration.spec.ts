import { parseDuration } from '@app/client';
import { parseGoDuration } from '@app/storage';

describe('client duration flags use the one Go duration parser', () => {
  it.each([
    ['30s', 30_000],
    ['1m30s', 90_000],
    ['168h', 168 * 3_600_000],
    ['1.5h', 5_400_000],
    ['500ms', 500],
    ['2', 2000],
    [' 5m ', 300_000],
  ])('%j → %d ms, as parseGoDuration (or seconds for a bare number)', (text, ms) => {
    expect(parseDuration(text, '--timeout')).toBe(ms);
    if (!/^\s*\d+\s*$/.test(text)) expect(parseGoDuration(text)).toBe(ms);
  });

  it.each(['', 'abc', '5x', '-1s', '+1s', '1s2'])('%j is a usage error naming the flag', (text) => {
    expect(() => parseDuration(text, '--interval')).toThrow(`invalid --interval "${text}": expected a duration such as 30s, 5m or 2h`);
  });
});
