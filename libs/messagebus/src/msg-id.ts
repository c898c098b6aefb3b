/**
 * Message ids: MSG-<UTC YYYYMMDD>-<HHMMSS>-<9-digit ns>-PID<pid%100000>-<counter%10000>
 * (cli-storage.md §4.3). The nanosecond clock is wall time at start plus the monotonic clock's
 * progress, forced strictly increasing, so two ids of one process never share a timestamp even when
 * the 4-digit counter wraps at >100k msg/s.
 */
let startWallMs = Date.now();
let startHr = process.hrtime();
// Re-anchor to the wall clock when the two drift apart (NTP steps, suspend) by more than this.
const MAX_DRIFT_MS = 1000;
let lastSec = 0;
let lastNanos = -1;
let counter = 0;
let cachedSecond = -1;
let cachedSecondText = '';
let cachedIsoPrefix = '';

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** Current [seconds, nanoseconds] since the epoch, strictly increasing within this process. */
export function nowSecNanos(): [number, number] {
  let [ds, dns] = process.hrtime(startHr);
  const wall = Date.now();
  if (Math.abs(startWallMs + ds * 1000 + dns / 1e6 - wall) > MAX_DRIFT_MS) {
    startWallMs = wall;
    startHr = process.hrtime();
    ds = 0;
    dns = 0;
  }
  let sec = Math.floor(startWallMs / 1000) + ds;
  let nanos = (startWallMs % 1000) * 1_000_000 + dns;
  if (nanos >= 1_000_000_000) {
    sec += 1;
    nanos -= 1_000_000_000;
  }
  if (sec < lastSec || (sec === lastSec && nanos <= lastNanos)) {
    sec = lastSec;
    nanos = lastNanos + 1;
    if (nanos >= 1_000_000_000) {
      sec += 1;
      nanos = 0;
    }
  }
  lastSec = sec;
  lastNanos = nanos;
  return [sec, nanos];
}

function secondParts(second: number): void {
  if (second === cachedSecond) return;
  const d = new Date(second * 1000);
  const date = `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1, 2)}${pad(d.getUTCDate(), 2)}`;
  const time = `${pad(d.getUTCHours(), 2)}${pad(d.getUTCMinutes(), 2)}${pad(d.getUTCSeconds(), 2)}`;
  cachedSecondText = `${date}-${time}`;
  cachedIsoPrefix = d.toISOString().slice(0, 19);
  cachedSecond = second;
}

export interface IdAndTime {
  msgId: string;
  /** RFC3339 with nanoseconds, trailing zeros trimmed, as Go's yaml.v3 writes time.Time. */
  tsText: string;
  ts: Date;
}

/** The shape of every generated id (a preset id must have it). */
export const MSG_ID_PATTERN = /^MSG-\d{8}-\d{6}-\d{9}-PID\d{5}-\d{4}$/;

/** A fresh message id, for a message another host writes later (BusWriter `msg_id`). */
export const newMessageId = (): string => nextMessageId().msgId;

export function nextMessageId(pid: number = process.pid): IdAndTime {
  const [second, nanos] = nowSecNanos();
  secondParts(second);
  counter = (counter + 1) % 10000;
  const msgId = `MSG-${cachedSecondText}-${pad(nanos, 9)}-PID${pad(pid % 100000, 5)}-${pad(counter, 4)}`;
  const tsText = `${cachedIsoPrefix}${fraction(nanos)}Z`;
  return { msgId, tsText, ts: new Date(second * 1000 + Math.floor(nanos / 1_000_000)) };
}

function fraction(nanos: number): string {
  if (nanos === 0) return '';
  return '.' + pad(nanos, 9).replace(/0+$/, '');
}

/** Formats a caller-supplied Date the way the writer stores `ts` (UTC, trimmed fraction). */
export function formatTimestamp(d: Date): string {
  const ms = d.getTime();
  if (Number.isNaN(ms)) throw new RangeError('invalid date');
  const iso = d.toISOString();
  return iso.slice(0, 19) + fraction(Math.round(((ms % 1000) + 1000) % 1000) * 1_000_000) + 'Z';
}
