/** Go's RFC3339Nano rendering of a UTC time: trailing fractional zeros trimmed; zero time stays `0001-01-01T00:00:00Z`. */
export function formatTime(d: Date | undefined | null): string {
  if (!d || Number.isNaN(d.getTime())) return '0001-01-01T00:00:00Z';
  const iso = d.toISOString();
  return iso.replace(/\.(\d*?)0*Z$/, (_m, frac: string) => (frac ? `.${frac}Z` : 'Z'));
}

export function isZeroTime(d: Date | undefined | null): boolean {
  return !d || Number.isNaN(d.getTime()) || d.getTime() <= Date.UTC(1, 0, 1) + 1000 || d.getUTCFullYear() <= 1;
}

/** Go duration syntax for whole seconds: 0s, 45s, 1m30s, 2h0m5s. */
export function goDurationSeconds(totalSeconds: number): string {
  const s = Math.max(0, Math.round(totalSeconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h > 0) return `${h}h${m}m${sec}s`;
  if (m > 0) return `${m}m${sec}s`;
  return `${sec}s`;
}

/** Parses a Go duration (`168h`, `90m`, `1h30m`, `1.5h`, `500ms`) into milliseconds; undefined when invalid. */
export function parseGoDuration(text: string): number | undefined {
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60000, h: 3600000 };
  const trimmed = text.trim();
  if (trimmed === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let consumed = 0;
  let match: RegExpExecArray | null;
  while ((match = re.exec(trimmed))) {
    total += parseFloat(match[1]) * units[match[2]];
    consumed = re.lastIndex;
  }
  return consumed > 0 && consumed === trimmed.length ? total : undefined;
}

export function isTruthyFlag(value: string | undefined): boolean {
  return ['1', 'true', 'yes', 'on'].includes((value ?? '').trim().toLowerCase());
}
