import { formatGoDuration, parseGoDuration } from '@app/storage';
import { RunnerError } from './runner.errors';

export { formatGoDuration };

/**
 * A duration given on the command line or in a setting: Go syntax (`30s`, `1m30s`, `500ms`) or a
 * bare number of seconds. Bad input is a RunnerError naming the flag.
 */
export function parseDurationFlag(text: string, flag = 'duration'): number {
  const value = text.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  try {
    const ms = parseGoDuration(value);
    if (ms >= 0) return ms;
  } catch {
    // reported below with the flag's name
  }
  throw new RunnerError('INVALID_INPUT', `invalid ${flag} "${text}": use a Go duration such as 30s, 1m30s or 500ms`);
}
