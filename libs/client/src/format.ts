import { parseGoDuration } from '@app/storage';
import { UsageError } from '@app/boot';

/** Output helpers that reproduce upstream's Go formatting (tabwriter, time layouts, sizes). */

/**
 * Go's tabwriter with minwidth 0, padding `padding`: every cell but the last of a row is padded
 * to its column's widest cell plus the padding.
 */
export function tabulate(rows: string[][], padding = 2): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.slice(0, -1).forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  }
  return rows
    .map((row) => row.map((cell, i) => (i < row.length - 1 ? cell.padEnd(widths[i] + padding) : cell)).join('').replace(/\s+$/, ''))
    .map((line) => line + '\n')
    .join('');
}

const pad2 = (n: number) => String(n).padStart(2, '0');

export function isZeroTime(value: string | undefined | null): boolean {
  if (!value) return true;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) || date.getUTCFullYear() <= 1;
}

function offset(date: Date): string {
  const minutes = -date.getTimezoneOffset();
  if (minutes === 0) return 'Z';
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`;
}

/** Go `time.RFC3339` in the local zone. */
export function formatRfc3339(value: string): string {
  const d = new Date(value);
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())}T${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}${offset(d)}`;
}

/** Go layouts "2006-01-02 15:04" / "2006-01-02 15:04:05" (local) and "15:04:05". */
export function formatLocal(value: string, withSeconds = false): string {
  const d = new Date(value);
  const base = `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
  return withSeconds ? `${base}:${pad2(d.getSeconds())}` : base;
}

export function formatClock(value: string): string {
  const d = new Date(value);
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
}

/** UTC "2006-01-02 15:04:05" (bus lines). */
export function formatUtc(value: string): string {
  return new Date(value).toISOString().slice(0, 19).replace('T', ' ');
}

/** `1h 2m 3s`, `2m 3s` or `3s`. */
export function formatUptime(seconds: number): string {
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor(total / 60) % 60;
  const s = total % 60;
  if (h > 0) return `${h}h ${m}m ${s}s`;
  if (m > 0) return `${m}m ${s}s`;
  return `${s}s`;
}

export function formatBytes(n: number): string {
  const KB = 1024;
  const MB = 1024 * KB;
  const GB = 1024 * MB;
  if (n >= GB) return `${(n / GB).toFixed(2)} GB`;
  if (n >= MB) return `${(n / MB).toFixed(2)} MB`;
  if (n >= KB) return `${(n / KB).toFixed(2)} KB`;
  return `${n} B`;
}

export function formatRunDuration(start: string, end: string | undefined | null): string {
  if (isZeroTime(end)) return 'running';
  const secs = Math.trunc((new Date(end!).getTime() - new Date(start).getTime()) / 1000);
  if (secs < 60) return `${secs}s`;
  return `${Math.trunc(secs / 60)}m${secs % 60}s`;
}

/** Go duration syntax (`30s`, `1m30s`, `168h`); a bare number is seconds. */
export function parseDuration(value: string, flag: string): number {
  const text = value.trim();
  let ms: number | undefined;
  try {
    ms = /^\d+(\.\d+)?$/.test(text) ? Number(text) * 1000 : parseGoDuration(text);
  } catch {
    ms = undefined;
  }
  if (ms === undefined || ms < 0 || /^[-+]/.test(text)) throw new UsageError(`invalid ${flag} "${value}": expected a duration such as 30s, 5m or 2h`);
  return ms;
}
