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

/** Go's Duration.String() for whole milliseconds: `1h2m3s`, `1m30s`, `20m0s`, `1.5s`, `0s`. */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  if (rest < 1000) return `${sign}${Number(rest.toFixed(3))}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const sec = Number((rest / 1000).toFixed(3));
  if (h > 0) return `${sign}${h}h${m}m${sec}s`;
  if (m > 0) return `${sign}${m}m${sec}s`;
  return `${sign}${sec}s`;
}
