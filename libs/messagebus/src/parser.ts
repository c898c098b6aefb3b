/**
 * Incremental reader state machine (cli-storage.md §4.4): SEEK → HEADER → BODY, where the `---`
 * line that closes a body also opens the next header. Bytes are fed in chunks; only complete lines
 * are consumed, and only the bytes of the entry in progress are kept, so a caller that feeds new
 * bytes as they arrive pays O(new bytes).
 */
import { parseHeader, type ParsedHeader } from './header';
import { decodeBody } from './format';
import { isForeign } from './foreign';
import type { BusMessage } from './types';

const NL = 0x0a;
const CR = 0x0d;
const DASH = 0x2d;

/** seek: before the first entry; emitted: the final entry was already emitted at EOF. */
export type ScanState = 'seek' | 'header' | 'body' | 'emitted';

export class EntryScanner {
  private buf: Buffer = Buffer.alloc(0);
  private pos = 0;
  private headerStart = 0;
  private bodyStart = 0;
  private header: ParsedHeader | undefined;
  private lineNo = 0;
  /** Absolute offset (bytes pushed before buf[0]) and the fence line that opened the current entry. */
  private base = 0;
  private opener = -1;
  private torn = 0;
  /** A body that ended without its terminator, held until the next header shows what it was. */
  private unterminated?: BusMessage;
  /** The same body without a foreign last line (a complete record, then foreign bytes, then a repair). */
  private unterminatedComplete?: BusMessage;

  constructor(private state: ScanState = 'seek') {}

  get currentState(): ScanState {
    return this.state;
  }

  /** Offset (from the first byte pushed) of the fence line that opened the entry in progress; -1 if none. */
  get openerOffset(): number {
    return this.opener;
  }

  /** Records skipped so far because they lacked their terminator (see onLine, BODY). */
  get tornRecords(): number {
    return this.torn;
  }

  /** Feeds bytes; returns the messages completed by them. */
  push(chunk: Buffer): BusMessage[] {
    this.compact(chunk);
    const out: BusMessage[] = [];
    const buf = this.buf;
    for (;;) {
      const nl = buf.indexOf(NL, this.pos);
      if (nl < 0) break;
      const start = this.pos;
      this.pos = nl + 1;
      this.onLine(start, nl, out);
    }
    return out;
  }

  /**
   * End of the bytes available now. Like upstream at EOF, a final body is emitted only when it is
   * non-empty and ends with a newline (a half-written entry is held back until it completes). When
   * the unterminated last line is foreign (foreign.ts), the record before it is complete and is
   * emitted without it: foreign bytes never cost a complete record (issue #31).
   */
  finish(): BusMessage[] {
    if (this.state !== 'body' || this.pos === this.bodyStart || !this.header) return [];
    if (this.pos !== this.buf.length && !isForeign(this.buf, this.pos, this.buf.length)) return [];
    const msg = this.makeMessage(this.pos, false);
    this.state = 'emitted';
    return [msg];
  }

  private compact(chunk: Buffer): void {
    let keep = this.pos;
    if (this.state === 'header') keep = this.headerStart;
    else if (this.state === 'body') keep = this.bodyStart;
    this.base += keep;
    if (keep > 0 || this.buf.length === 0) {
      const rest = this.buf.subarray(keep);
      this.buf = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
      this.pos -= keep;
      this.headerStart -= keep;
      this.bodyStart -= keep;
    } else {
      this.buf = Buffer.concat([this.buf, chunk]);
    }
  }

  private isFence(start: number, end: number): boolean {
    let e = end;
    while (e > start && this.buf[e - 1] === CR) e--;
    return e - start === 3 && this.buf[start] === DASH && this.buf[start + 1] === DASH && this.buf[start + 2] === DASH;
  }

  private onLine(start: number, nl: number, out: BusMessage[]): void {
    const fence = this.isFence(start, nl);
    switch (this.state) {
      case 'seek':
        this.lineNo++;
        if (fence) this.openHeader(start);
        else {
          const legacy = parseLegacyLine(this.buf.toString('utf8', start, nl), this.lineNo);
          if (legacy) out.push(legacy);
        }
        return;
      case 'emitted':
        if (fence) this.openHeader(start);
        return;
      case 'header':
        if (fence) this.closeHeader(start, out);
        return;
      case 'body':
        if (fence) {
          // A record ends with its body's newline plus the separator newline, so a complete one is
          // followed by a blank line before the next fence (both writers always write it). A
          // non-empty body without it is either torn (a writer died mid-append and the next
          // record follows) or an upstream body with a bare `---` line (what follows is no
          // header): the next header decides (closeHeader).
          if (this.endsWithTerminator(start) || start === this.bodyStart) out.push(this.makeMessage(start, true));
          else {
            this.unterminated = this.makeMessage(start, true);
            this.unterminatedComplete = this.withoutForeignLastLine(start);
          }
          this.openHeader(start);
        }
        return;
    }
  }

  private endsWithTerminator(fenceStart: number): boolean {
    return fenceStart - this.bodyStart >= 2 && this.buf[fenceStart - 1] === NL && this.buf[fenceStart - 2] === NL;
  }

  /**
   * A body region `…\n<foreign line>\n` closed by a fence without the blank separator is a
   * complete record followed by foreign bytes that the next append ended with a newline (writer.ts
   * repairs that way): the record is the region before the foreign line.
   */
  private withoutForeignLastLine(fenceStart: number): BusMessage | undefined {
    const lineEnd = fenceStart - 1;
    if (lineEnd <= this.bodyStart || this.buf[lineEnd] !== NL) return undefined;
    const lineStart = this.buf.lastIndexOf(NL, lineEnd - 1) + 1;
    if (lineStart <= this.bodyStart || !isForeign(this.buf, lineStart, lineEnd)) return undefined;
    return this.makeMessage(lineStart, false);
  }

  private openHeader(fenceStart: number): void {
    this.opener = this.base + fenceStart;
    this.state = 'header';
    this.headerStart = this.pos;
    this.header = undefined;
  }

  private closeHeader(fenceStart: number, out: BusMessage[]): void {
    const held = this.unterminated;
    const complete = this.unterminatedComplete;
    this.unterminated = undefined;
    this.unterminatedComplete = undefined;
    try {
      this.header = parseHeader(this.buf.toString('utf8', this.headerStart, fenceStart));
    } catch {
      // Upstream re-syncs best-effort: the fence that closed a bad header opens a new one; the
      // body before it is read as upstream reads it.
      if (held) out.push(held);
      this.openHeader(fenceStart);
      return;
    }
    if (complete) out.push(complete);
    else if (held) this.torn++;
    this.state = 'body';
    this.bodyStart = this.pos;
  }

  /** Body from the bytes up to `end`, minus the separator newline when one precedes `end` (format.ts decodeBody). */
  private makeMessage(end: number, separated: boolean): BusMessage {
    let e = end;
    if (separated && e > this.bodyStart && this.buf[e - 1] === NL) e--;
    const { trailing_newline: kept, ...header } = this.header!;
    const body = decodeBody(this.buf.toString('utf8', this.bodyStart, e), kept === 'kept');
    return { ...header, body };
  }
}

const LEGACY_TS = [
  /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/,
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/,
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/,
];

function parseLegacyTimestamp(raw: string): Date | undefined {
  for (const re of LEGACY_TS) {
    const m = re.exec(raw);
    if (!m) continue;
    const ms = m[7] ? Number(m[7].slice(1, 4).padEnd(3, '0')) : 0;
    let t = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6], ms);
    const zone = m[8];
    if (zone && zone !== 'Z' && zone !== 'z') {
      const sign = zone[0] === '-' ? -1 : 1;
      t -= sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60_000;
    }
    const d = new Date(t);
    if (d.getUTCDate() !== +m[3] && !zone) return undefined; // e.g. Feb 30
    return d;
  }
  return undefined;
}

/** Legacy one-line entries `[<timestamp>] TYPE: body` (cli-storage.md §4.4, SEEK state). */
export function parseLegacyLine(line: string, lineNo: number): BusMessage | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('[')) return undefined;
  const closing = trimmed.indexOf(']');
  if (closing <= 1) return undefined;
  const ts = parseLegacyTimestamp(trimmed.slice(1, closing).trim());
  if (!ts) return undefined;
  const content = trimmed.slice(closing + 1).trim();
  if (!content) return undefined;
  let type = 'INFO';
  let body = content;
  const colon = content.indexOf(':');
  if (colon > 0) {
    const token = content.slice(0, colon).trim();
    if (/^[A-Za-z0-9_/-]+$/.test(token)) {
      type = token.toUpperCase();
      body = content.slice(colon + 1).trim();
    }
  }
  if (!body) body = content;
  return {
    msg_id: `LEGACY-LINE-${String(lineNo).padStart(9, '0')}`,
    ts,
    type,
    project_id: '',
    task_id: '',
    run_id: '',
    body,
  };
}

/** Parses a whole buffer (a complete file or a window starting at an entry). */
export function parseAll(data: Buffer, state: ScanState = 'seek'): BusMessage[] {
  const scanner = new EntryScanner(state);
  const out = scanner.push(data);
  // A last line without a newline in SEEK state is still a line to upstream (legacy entries).
  if (scanner.currentState === 'seek' && data.length > 0 && data[data.length - 1] !== NL) out.push(...scanner.push(Buffer.from('\n')));
  out.push(...scanner.finish());
  return out;
}
