const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration (e.g. `30s`, `1m30s`, `1.5h`, `-2m`) in milliseconds. Throws on bad input. */
export function parseGoDuration(text: string): number {
  const s = text.trim();
  if (s === '0' || s === '+0' || s === '-0') return 0;
  const m = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/.exec(s);
  if (!m || s === '') throw new Error(`time: invalid duration ${JSON.stringify(text)}`);
  let total = 0;
  for (const part of s.replace(/^[-+]/, '').matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) {
    total += Number(part[1]) * UNIT_MS[part[2]];
  }
  return m[1] === '-' ? -total : total;
}

/** Go's time.Duration.String(): `5m0s`, `2h0m0s`, `1h30m30.5s`, `1.5s`, `500ms`, `250µs`, `0s`. */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  const totalNs = Math.round(Math.abs(ms) * 1e6);
  if (totalNs < 1e9) {
    if (totalNs < 1e3) return `${sign}${totalNs}ns`;
    if (totalNs < 1e6) return `${sign}${trimFraction(totalNs / 1e3)}µs`;
    return `${sign}${trimFraction(totalNs / 1e6)}ms`;
  }
  const hours = Math.floor(totalNs / 3.6e12);
  const minutes = Math.floor((totalNs % 3.6e12) / 6e10);
  const seconds = (totalNs % 6e10) / 1e9;
  let out = `${trimFraction(seconds)}s`;
  if (hours > 0 || minutes > 0) out = `${minutes}m${out}`;
  if (hours > 0) out = `${hours}h${out}`;
  return sign + out;
}

function trimFraction(value: number): string {
  return value.toFixed(9).replace(/\.?0+$/, '');
}

/**
 * A duration given on the command line or in a setting: Go syntax (`30s`, `1m30s`, `500ms`) or a
 * bare number of seconds, in milliseconds; undefined when it is neither (or negative).
 */
export function parseDurationOrSeconds(text: string): number | undefined {
  const value = text.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  try {
    const ms = parseGoDuration(value);
    return ms >= 0 ? ms : undefined;
  } catch {
    return undefined;
  }
}
