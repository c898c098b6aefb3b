import { closeSync, fstatSync } from 'node:fs';
import { BusError } from './errors';
import { EntryScanner } from './parser';
import { openForRead, readLastBefore, readRange } from './reader';
import type { BusMessage } from './types';

/*
 * Bounded reads of a bus (issue #29): one page of messages around a cursor, in memory about the
 * size of the page, whatever the size of the bus. A cursor is a msg_id; it is found by scanning the
 * file backwards in fixed chunks (constant memory), then only the page is parsed.
 */

const CHUNK = 1024 * 1024;
const FORWARD_CHUNK = 256 * 1024;

export interface BusPage {
  messages: BusMessage[];
  /** More messages lie beyond the page in its direction (older for `newest`/`before`, newer for `after`/`first`). */
  hasMore: boolean;
}

export type BusPageRequest =
  /** The newest `limit` messages, or the `limit` just before the message `before`. */
  | { kind: 'newest'; limit: number; before?: string }
  /** The oldest `limit` messages, or the `limit` just after the message `after`. */
  | { kind: 'oldest'; limit: number; after?: string }
  /** The newest `limit` messages after `since` (upstream's since+limit rule): `hasMore` when some after `since` were left out. */
  | { kind: 'since'; limit: number; since: string };

function notFound(id: string): BusError {
  return new BusError('SINCE_NOT_FOUND', `since id "${id}" not found`);
}

/** Byte offset of the fence line that opens message `id`, or undefined (backward scan, 1 MiB chunks). */
function locateEntry(fd: number, size: number, id: string, path: string): number | undefined {
  const needle = Buffer.from(`---\nmsg_id: ${id}\n`);
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - CHUNK);
    // overlap the next (earlier) chunk by the needle's length so a match across the seam is seen
    const buf = readRange(fd, start, Math.min(size, end + needle.length - 1), path);
    for (let at = buf.lastIndexOf(needle); at >= 0; at = at > 0 ? buf.lastIndexOf(needle, at - 1) : -1) {
      const offset = start + at;
      if (offset >= end) continue;
      if (offset === 0 || (at > 0 && buf[at - 1] === 0x0a) || (at === 0 && readRange(fd, offset - 1, offset, path)[0] === 0x0a)) {
        const first = readForward(fd, size, offset, 1, path).messages[0];
        if (first?.msg_id === id) return offset;
      }
    }
    end = start;
  }
  return undefined;
}

/** Up to `n` messages from the entry opening at `offset` forward; hasMore when more follow. */
function readForward(fd: number, size: number, offset: number, n: number, path: string): BusPage {
  const scanner = new EntryScanner(offset === 0 ? 'seek' : 'emitted');
  const out: BusMessage[] = [];
  for (let pos = offset; pos < size && out.length <= n; ) {
    const data = readRange(fd, pos, Math.min(size, pos + FORWARD_CHUNK), path);
    if (data.length === 0) break;
    pos += data.length;
    out.push(...scanner.push(data));
    if (pos >= size) out.push(...scanner.finish());
  }
  return { messages: out.slice(0, n), hasMore: out.length > n };
}

/** One page of the bus at `path` (a missing bus is empty; an unknown cursor is SINCE_NOT_FOUND). */
export function readBusPage(path: string, req: BusPageRequest): BusPage {
  const fd = openForRead(path);
  if (fd === undefined) {
    const cursor = req.kind === 'newest' ? req.before : req.kind === 'oldest' ? req.after : req.since;
    if (cursor) throw notFound(cursor);
    return { messages: [], hasMore: false };
  }
  try {
    const size = fstatSync(fd).size;
    const limit = Math.max(1, req.limit);
    if (req.kind === 'oldest') {
      if (!req.after) return readForward(fd, size, 0, limit, path);
      const at = locateEntry(fd, size, req.after, path);
      if (at === undefined) throw notFound(req.after);
      const page = readForward(fd, size, at, limit + 1, path);
      return { messages: page.messages.slice(1), hasMore: page.hasMore };
    }
    let end = size;
    if (req.kind === 'newest' && req.before) {
      const at = locateEntry(fd, size, req.before, path);
      if (at === undefined) throw notFound(req.before);
      end = at;
    }
    const last = readLastBefore(fd, end, limit + 1, path);
    if (req.kind === 'since') {
      const i = last.findIndex((m) => m.msg_id === req.since);
      if (i >= 0) return { messages: last.slice(i + 1).slice(-limit), hasMore: false };
      if (locateEntry(fd, size, req.since, path) === undefined) throw notFound(req.since);
    }
    return { messages: last.slice(-limit), hasMore: last.length > limit };
  } finally {
    closeSync(fd);
  }
}
