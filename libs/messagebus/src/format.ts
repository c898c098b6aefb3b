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
 * Trailing newlines (issue #31), byte-compatible with upstream's writer and reader: the body is
 * followed by a terminating `\n` only when it does not already end with one (upstream's rule), so
 * upstream's reader returns a non-final body byte-exact when it ends in a newline (a blank line
 * included) and with its usual one extra `\n` otherwise. Upstream's bytes cannot tell "x" from
 * "x\n" (both are written `x\n`); a body ending in a blank line (`\n\n`) is unambiguous. So our
 * reader, given the written bytes W (the body region without the separator newline), returns W
 * when it ends in `\n\n` and W minus one `\n` otherwise, which decodes every upstream body
 * except the inherent "x\n" case exactly; for that one case our writer adds the header line
 * `trailing_newline: kept` (ignored by upstream's yaml decoder) and our reader returns W as is.
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

/** True for a body ending in exactly one newline: the case upstream's bytes cannot tell apart. */
export function needsKeptNewline(body: string): boolean {
  return body.endsWith('\n') && !body.endsWith('\n\n');
}

/** One complete entry: `---`, header, `---`, escaped body, a terminating newline unless it ends in one. */
export function serializeEntry(header: HeaderFields, body: string): string {
  const h = needsKeptNewline(body) ? { ...header, trailingNewline: true } : header;
  return `---\n${emitHeader(h)}---\n${escapeBody(body)}${body.endsWith('\n') ? '' : '\n'}`;
}

/** The body from its written bytes W (the body region without the separator newline); see above. */
export function decodeBody(written: string, kept: boolean): string {
  const w = kept || written.endsWith('\n\n') || !written.endsWith('\n') ? written : written.slice(0, -1);
  return unescapeBody(w);
}
