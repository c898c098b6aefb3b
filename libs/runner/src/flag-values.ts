import { UsageError } from '@app/boot';
import { parseDurationFlag } from './go-duration';

/** A Go duration flag value (`30s`, `1m30s`, `168h`) in milliseconds; bad input is a usage error. */
export function durationFlag(value: string, flag: string): number {
  let ms: number;
  try {
    ms = parseDurationFlag(value, flag);
  } catch {
    throw new UsageError(`invalid ${flag} "${value}": use a Go duration such as 30s, 20m or 168h`);
  }
  if (ms < 0) throw new UsageError(`invalid ${flag} "${value}": must not be negative`);
  return ms;
}

/** An optional duration flag: undefined when not given. */
export function optionalDuration(value: string | undefined, flag: string): number | undefined {
  return value === undefined ? undefined : durationFlag(value, flag);
}

/** A non-negative integer flag value. */
export function countFlag(value: string, flag: string): number {
  if (!/^\s*\d+\s*$/.test(value)) throw new UsageError(`invalid ${flag} "${value}": must be a non-negative integer`);
  return Number(value.trim());
}
