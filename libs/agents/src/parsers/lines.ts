import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

/** Parser input: the whole NDJSON text, or any iterable of its lines. */
export type StreamInput = string | Iterable<string>;

const CHUNK_BYTES = 1024 * 1024;

export function* linesOf(input: StreamInput): Generator<string> {
  if (typeof input !== 'string') {
    yield* input;
    return;
  }
  let start = 0;
  while (start <= input.length) {
    const end = input.indexOf('\n', start);
    if (end === -1) {
      if (start < input.length) yield input.slice(start);
      return;
    }
    yield input.slice(start, end);
    start = end + 1;
  }
}

/**
 * Lines of a file, read in 1 MiB chunks so that a large stdout never has to sit in memory as one
 * string. Lines of any length are returned whole (upstream's scanner gave up after 1 MiB).
 */
export function* readFileLines(path: string): Generator<string> {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(CHUNK_BYTES);
    const decoder = new StringDecoder('utf8');
    let pending = '';
    for (;;) {
      const n = readSync(fd, buf, 0, CHUNK_BYTES, null);
      if (n === 0) break;
      pending += decoder.write(buf.subarray(0, n));
      let nl = pending.indexOf('\n');
      if (nl === -1) continue;
      let start = 0;
      while (nl !== -1) {
        yield pending.slice(start, nl);
        start = nl + 1;
        nl = pending.indexOf('\n', start);
      }
      pending = pending.slice(start);
    }
    pending += decoder.end();
    if (pending !== '') yield pending;
  } finally {
    closeSync(fd);
  }
}

/** Parses one NDJSON line into an object; blank, non-JSON and non-object lines give undefined. */
export function parseJsonObject(line: string): Record<string, unknown> | undefined {
  const trimmed = line.trim();
  if (trimmed === '' || trimmed[0] !== '{') return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Generic text extractor: a string as is; an object's first non-blank value among `keys`
 * (recursively); an array's non-blank parts joined by newlines.
 */
export function textOf(value: unknown, keys: readonly string[]): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    return value
      .map((part) => textOf(part, keys))
      .filter((t) => t.trim() !== '')
      .join('\n');
  }
  if (isRecord(value)) {
    for (const key of keys) {
      const text = textOf(value[key], keys);
      if (text.trim() !== '') return text;
    }
  }
  return '';
}
