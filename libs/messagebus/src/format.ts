/**
 * Entry layout (cli-storage.md §4.2) and the body escaping that makes bodies round-trip (D9).
 *
 * Message bus escaping: a body line that, ignoring trailing CRs, is `---` preceded by zero or more
 * backslashes (/^\\*---\r*$/) is written with ONE extra leading backslash, and our reader removes
 * one backslash from such lines. Upstream's reader therefore never sees a bare `---` inside a body
 * (it shows `\---`, and loses no following message), while our reader returns the body
 * byte-identical. Lines that already start with backslashes stay unambiguous because every such
 * line gains exactly one.
 *
 * The body is always followed by one terminating `\n` (upstream adds it only when missing, which
 * loses a trailing newline); our reader strips exactly one, so "a\n" round-trips too. Upstream's
 * reader returns our bodies with the usual rule (one extra `\n` on non-final entries).
 */
import { emitHeader, type HeaderFields } from './header';

const NEEDS_ESCAPE = /^(\\*---\r*)$/gm;
const ESCAPED = /^\\(\\*---\r*)$/gm;

export function escapeBody(body: string): string {
  return body.includes('---') ? body.replace(NEEDS_ESCAPE, '\\$1') : body;
}

export function unescapeBody(body: string): string {
  return body.includes('\\---') ? body.replace(ESCAPED, '$1') : body;
}

/** One complete entry: `---`, header, `---`, escaped body, terminating newline. */
export function serializeEntry(header: HeaderFields, body: string): string {
  return `---\n${emitHeader(header)}---\n${escapeBody(body)}\n`;
}
