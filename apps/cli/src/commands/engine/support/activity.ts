import { formatGoDuration } from '@app/runner';
import type { ActivityBusMessage } from '@app/runner';
import { localMinute } from './table';

export { DEFAULT_DRIFT_AFTER_MS, compactPreview, type ActivitySignals } from '@app/runner';

/** One table/concise cell: whitespace collapsed, `-` when empty. */
export function safeField(value: string | null | undefined): string {
  const compact = (value ?? '').trim().split(/\s+/).filter(Boolean).join(' ');
  return compact === '' ? '-' : compact;
}

export function formatAge(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '-';
  return formatGoDuration(Math.max(0, seconds) * 1000);
}

export function formatBusSummary(msg: ActivityBusMessage | null | undefined): string {
  if (!msg) return '-';
  const parts = [msg.timestamp, msg.type, msg.body_preview].map((p) => p.trim()).filter(Boolean);
  return parts.length ? parts.join(' ') : '-';
}

export function formatLocalTimestamp(ts: string | null | undefined): string {
  if (!ts?.trim()) return '-';
  const parsed = new Date(ts);
  return Number.isNaN(parsed.getTime()) ? ts : localMinute(parsed);
}
