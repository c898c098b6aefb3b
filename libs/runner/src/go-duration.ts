import { RunnerError } from './runner.errors';

/** Go's time.Duration.String(): `5m0s`, `2h0m0s`, `1.5s`, `500ms`, `0s`. */
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

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses Go duration strings (`1s`, `1m30s`, `250ms`, `0`); a bare number is taken as seconds. */
export function parseGoDuration(text: string, flag = 'duration'): number {
  const value = text.trim();
  if (value === '0') return 0;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let consumed = 0;
  let match: RegExpExecArray | null;
  while ((match = re.exec(value)) !== null) {
    total += Number(match[1]) * UNIT_MS[match[2]];
    consumed = re.lastIndex;
  }
  if (value === '' || consumed !== value.length) {
    throw new RunnerError('INVALID_INPUT', `invalid ${flag} "${text}": use a Go duration such as 30s, 1m30s or 500ms`);
  }
  return total;
}
