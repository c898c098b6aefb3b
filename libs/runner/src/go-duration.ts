import { formatGoDuration, parseDurationOrSeconds } from '@app/storage';
import { RunnerError } from './runner.errors';

export { formatGoDuration };

/**
 * A duration given on the command line or in a setting: Go syntax (`30s`, `1m30s`, `500ms`) or a
 * bare number of seconds. Bad input is a RunnerError naming the flag.
 */
export function parseDurationFlag(text: string, flag = 'duration'): number {
  const ms = parseDurationOrSeconds(text);
  if (ms !== undefined) return ms;
  throw new RunnerError('INVALID_INPUT', `invalid ${flag} "${text}": use a Go duration such as 30s, 1m30s or 500ms`);
}
