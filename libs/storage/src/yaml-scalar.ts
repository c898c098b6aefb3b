/**
 * Scalar emission that reproduces go-yaml v3 (yaml.Marshal: 4-space indent, unicode output, no
 * line wrapping), so run-info.yaml files are byte-identical to upstream's for the same values.
 */

const OLD_BOOLS = new Set(['y', 'Y', 'yes', 'Yes', 'YES', 'on', 'On', 'ON', 'n', 'N', 'no', 'No', 'NO', 'off', 'Off', 'OFF']);
const RESERVED = new Set([
  '', '~', 'null', 'Null', 'NULL', 'true', 'True', 'TRUE', 'false', 'False', 'FALSE', '<<',
  '.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF', '-.inf', '-.Inf', '-.INF', '.nan', '.NaN', '.NAN',
]);
const FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const BASE60 = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;
const TIMESTAMP = /^\d{4}-\d{1,2}-\d{1,2}(?:(?:[Tt]| +)\d{1,2}:\d{1,2}:\d{1,2}(?:\.\d*)?(?:Z|[-+]\d{1,2}(?::?\d{2})?)?)?$/;

/** Would go-yaml resolve this plain text to something other than a string? */
function resolvesToNonString(s: string): boolean {
  if (RESERVED.has(s)) return true;
  const noUnderscore = s.replace(/_/g, '');
  if (/^[-+]?(0[xX][0-9a-fA-F]+|0[oO]?[0-7]+|0[bB][01]+|[0-9]+)$/.test(noUnderscore)) return true;
  if (FLOAT.test(noUnderscore)) return true;
  return TIMESTAMP.test(s);
}

function isPrintable(cp: number): boolean {
  return (
    cp === 0x0a ||
    (cp >= 0x20 && cp <= 0x7e) ||
    cp === 0x85 ||
    (cp >= 0xa0 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd && cp !== 0xfeff) ||
    (cp >= 0x10000 && cp <= 0x10ffff)
  );
}

interface Analysis {
  blockPlain: boolean;
  singleQuoted: boolean;
  block: boolean;
}

/** libyaml's yaml_emitter_analyze_scalar, reduced to what block-context emission needs. */
function analyze(s: string): Analysis {
  const chars = Array.from(s);
  let blockIndicators = s.startsWith('---') || s.startsWith('...');
  let special = false;
  let lineBreaks = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  let prevSpace = false;
  let prevBreak = false;
  let precededByWs = true;
  chars.forEach((ch, i) => {
    const next = chars[i + 1];
    const followedByWs = next === undefined || next === ' ' || next === '\t' || next === '\n' || next === '\r';
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(ch)) blockIndicators = true;
      if ((ch === '?' || ch === ':') && followedByWs) blockIndicators = true;
      if (ch === '-' && followedByWs) blockIndicators = true;
    } else {
      if (ch === ':' && followedByWs) blockIndicators = true;
      if (ch === '#' && precededByWs) blockIndicators = true;
    }
    const cp = ch.codePointAt(0) as number;
    if (!isPrintable(cp) || cp === 0xfeff) special = true;
    const isBreak = ch === '\n' || ch === '\r' || cp === 0x85 || cp === 0x2028 || cp === 0x2029;
    if (isBreak) lineBreaks = true;
    if (ch === ' ') {
      if (i === 0) leadingSpace = true;
      if (i === chars.length - 1) trailingSpace = true;
      if (prevBreak) breakSpace = true;
      prevSpace = true;
      prevBreak = false;
    } else if (isBreak) {
      if (i === 0) leadingBreak = true;
      if (i === chars.length - 1) trailingBreak = true;
      if (prevSpace) spaceBreak = true;
      prevBreak = true;
      prevSpace = false;
    } else {
      prevSpace = false;
      prevBreak = false;
    }
    precededByWs = ch === ' ' || ch === '\t' || isBreak;
  });
  const a: Analysis = { blockPlain: true, singleQuoted: true, block: true };
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) a.blockPlain = false;
  if (trailingSpace) a.block = false;
  if (breakSpace) a.blockPlain = a.singleQuoted = false;
  if (spaceBreak || special) a.blockPlain = a.singleQuoted = a.block = false;
  if (lineBreaks) a.blockPlain = false;
  if (blockIndicators) a.blockPlain = false;
  return a;
}

const ESCAPES: Record<string, string> = {
  '\0': '\\0', '\x07': '\\a', '\b': '\\b', '\t': '\\t', '\n': '\\n', '\x0b': '\\v', '\f': '\\f',
  '\r': '\\r', '\x1b': '\\e', '"': '\\"', '\\': '\\\\', '\u0085': '\\N', '\u00a0': '\\_',
  '\u2028': '\\L', '\u2029': '\\P',
};

function doubleQuoted(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (ESCAPES[ch] !== undefined) out += ESCAPES[ch];
    else if (!isPrintable(cp) || cp === 0xfeff) {
      if (cp <= 0xff) out += `\\x${cp.toString(16).toUpperCase().padStart(2, '0')}`;
      else if (cp <= 0xffff) out += `\\u${cp.toString(16).toUpperCase().padStart(4, '0')}`;
      else out += `\\U${cp.toString(16).toUpperCase().padStart(8, '0')}`;
    } else out += ch;
  }
  return out + '"';
}

function literal(s: string, indent: string): string {
  let chomp = '-';
  if (s.endsWith('\n')) chomp = s.endsWith('\n\n') || s === '\n' ? '+' : '';
  const hint = s.startsWith(' ') || s.startsWith('\n') ? String(indent.length) : '';
  const body = s.endsWith('\n') ? s.slice(0, -1) : s;
  const lines = body.split('\n').map((line) => (line === '' ? '' : indent + line));
  return `|${hint}${chomp}\n${lines.join('\n')}`;
}

/** The text after `key: ` for a string value in a top-level block mapping. */
export function yamlString(s: string, indent = '    '): string {
  if (s.includes('\n')) {
    return analyze(s).block ? literal(s, indent) : doubleQuoted(s);
  }
  const canPlain = !resolvesToNonString(s) && !OLD_BOOLS.has(s) && !BASE60.test(s);
  if (!canPlain) return doubleQuoted(s);
  const a = analyze(s);
  if (a.blockPlain) return s;
  if (a.singleQuoted) return `'${s.replace(/'/g, "''")}'`;
  return doubleQuoted(s);
}

/** Go's time.RFC3339Nano for a UTC instant: fractional seconds without trailing zeros. */
export function rfc3339Nano(d: Date): string {
  const iso = d.toISOString();
  const m = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d+))?Z$/.exec(iso);
  if (!m) return iso;
  const frac = (m[2] ?? '').replace(/0+$/, '');
  return `${m[1]}${frac ? '.' + frac : ''}Z`;
}
