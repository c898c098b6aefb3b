import { formatGoDuration, parseGoDuration } from './config/duration';

/** Go's RFC3339Nano rendering of a UTC time: trailing fractional zeros trimmed; zero time stays `0001-01-01T00:00:00Z`. */
export function formatTime(d: Date | undefined | null): string {
  if (!d || Number.isNaN(d.getTime())) return '0001-01-01T00:00:00Z';
  const iso = d.toISOString();
  // whole seconds (most run times) without the regex: listings format thousands of these per request
  if (iso.endsWith('.000Z')) return `${iso.slice(0, -5)}Z`;
  return iso.replace(/\.(\d*?)0*Z$/, (_m, frac: string) => (frac ? `.${frac}Z` : 'Z'));
}

/** The API's zero-time test (any time up to 0001-01-01T00:00:01Z, or invalid); run-info's isZeroTime is the exact one. */
export function isZeroWireTime(d: Date | undefined | null): boolean {
  return !d || Number.isNaN(d.getTime()) || d.getTime() <= Date.UTC(1, 0, 1) + 1000 || d.getUTCFullYear() <= 1;
}

/** Go duration syntax for whole seconds: 0s, 45s, 1m30s, 2h0m5s. */
export function goDurationSeconds(totalSeconds: number): string {
  return formatGoDuration(Math.max(0, Math.round(totalSeconds)) * 1000);
}

/** Parses a non-negative Go duration (`168h`, `90m`, `1h30m`, `1.5h`, `500ms`) into milliseconds; undefined when invalid. */
export function parseGoDurationOrUndefined(text: string): number | undefined {
  try {
    const ms = parseGoDuration(text);
    return ms >= 0 ? ms : undefined;
  } catch {
    return undefined;
  }
}

export function isTruthyFlag(value: string | undefined): boolean {
  return ['1', 'true', 'yes', 'on'].includes((value ?? '').trim().toLowerCase());
}
