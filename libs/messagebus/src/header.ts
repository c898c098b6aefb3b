/**
 * The entry header: a tiny YAML emitter producing yaml.v3's layout for the fields we write
 * (cli-storage.md §4.2), and a parser with a fast path for that layout. Unusual headers (written
 * by hand or by other tools) fall back to the `yaml` package, loaded only when needed so that the
 * CLI's `bus post` never pays for it.
 */
import { parseYaml } from '@app/storage/lazy-yaml';
import { BusError } from './errors';
import type { BusLink, BusMessage, BusParent } from './types';

const INDENT = '    ';

// Strings that a YAML 1.1/1.2 resolver would read as something other than a string.
const NON_STRING_PATTERNS = [
  /^(?:~|null|Null|NULL)$/,
  /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/,
  /^[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?$/,
  /^[-+]?0x[0-9a-fA-F_]+$/,
  /^[-+]?0o?[0-7_]+$/,
  /^[-+]?0b[01_]+$/,
  /^[-+]?\.(?:inf|Inf|INF)$/,
  /^\.(?:nan|NaN|NAN)$/,
  /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/,
  /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}/,
  /^(?:<<|=)$/,
];
// eslint-disable-next-line no-control-regex
const NON_PRINTABLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/;
const INDICATOR_START = /^[-?:,[\]{}#&*!|>'"%@`]/;

function canBePlain(s: string): boolean {
  if (s === '' || s !== s.trim() || s.includes('\n') || s.includes('\t') || NON_PRINTABLE.test(s)) return false;
  if (INDICATOR_START.test(s) || s.includes(': ') || s.includes(' #') || s.endsWith(':')) return false;
  return !NON_STRING_PATTERNS.some((re) => re.test(s));
}

function doubleQuoted(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) out += '\\x' + c.toString(16).padStart(2, '0');
    else if (c === 0x2028 || c === 0x2029 || c === 0xfeff || c === 0xfffe || c === 0xffff) out += '\\u' + c.toString(16);
    else out += ch;
  }
  return out + '"';
}

/** Literal block (`|-`, `|`, `|+`) when yaml.v3 would allow one, else undefined. */
function literalBlock(s: string, indent: string): string | undefined {
  if (!s.includes('\n') || NON_PRINTABLE.test(s) || s.includes('\r') || s.includes('\t')) return undefined;
  if (s.startsWith(' ') || s.startsWith('\n') || / \n/.test(s) || s.endsWith(' ')) return undefined;
  const trailing = /\n*$/.exec(s)![0].length;
  const chomp = trailing === 0 ? '-' : trailing === 1 ? '' : '+';
  const content = trailing === 0 ? s : s.slice(0, s.length - 1);
  const lines = content.split('\n').map((l) => (l === '' ? '' : indent + l));
  return `|${chomp}\n${lines.join('\n')}`;
}

// Ids and types repeat from message to message: remember recent plain-or-quoted decisions.
const SIMPLE = /^[A-Za-z][A-Za-z0-9_./-]{5,}$/;
const scalarCache = new Map<string, string>();

/** A scalar value for `key: <value>`; multi-line literal blocks are indented under `keyIndent`. */
export function yamlScalar(s: string, keyIndent = ''): string {
  if (SIMPLE.test(s) && !s.endsWith(':')) return s; // letters first, 6+ chars: never a bool/null/number
  if (s.length > 200 || s.includes('\n')) return canBePlain(s) ? s : (literalBlock(s, keyIndent + INDENT) ?? doubleQuoted(s));
  let out = scalarCache.get(s);
  if (out === undefined) {
    out = canBePlain(s) ? s : doubleQuoted(s);
    if (scalarCache.size > 1000) scalarCache.clear();
    scalarCache.set(s, out);
  }
  return out;
}

function yamlKey(s: string): string {
  return canBePlain(s) ? s : doubleQuoted(s);
}

function emitMap(map: Record<string, string>, indent: string): string {
  let out = '';
  for (const key of Object.keys(map).sort()) out += `${indent}${yamlKey(key)}: ${yamlScalar(map[key], indent)}\n`;
  return out;
}

export interface HeaderFields {
  msgId: string;
  tsText: string;
  type: string;
  projectId: string;
  taskId: string;
  runId: string;
  issueId?: string;
  parents?: BusParent[];
  links?: BusLink[];
  meta?: Record<string, string>;
  /** The writer's owner epoch (fencing, issue #31); emitted after meta, ignored by upstream. */
  ownerEpoch?: number;
  /** The body ends in exactly one newline that is its own, not the writer's terminator (format.ts). */
  trailingNewline?: boolean;
}

/** The header lines (without the `---` fences), keys in yaml.v3 struct order. */
export function emitHeader(h: HeaderFields): string {
  let out =
    `msg_id: ${yamlScalar(h.msgId)}\nts: ${h.tsText}\ntype: ${yamlScalar(h.type)}\n` +
    `project_id: ${yamlScalar(h.projectId)}\ntask_id: ${yamlScalar(h.taskId)}\nrun_id: ${yamlScalar(h.runId)}\n`;
  if (h.issueId) out += `issue_id: ${yamlScalar(h.issueId)}\n`;
  if (h.parents && h.parents.length > 0) {
    out += 'parents:\n';
    for (const p of h.parents) {
      const item = INDENT + '  ';
      out += `${INDENT}- msg_id: ${yamlScalar(p.msg_id, item)}\n`;
      if (p.kind) out += `${item}kind: ${yamlScalar(p.kind, item)}\n`;
      if (p.meta && Object.keys(p.meta).length > 0) out += `${item}meta:\n` + emitMap(p.meta, item + INDENT);
    }
  }
  if (h.links && h.links.length > 0) {
    out += 'links:\n';
    for (const l of h.links) {
      const item = INDENT + '  ';
      out += `${INDENT}- url: ${yamlScalar(l.url, item)}\n`;
      if (l.label) out += `${item}label: ${yamlScalar(l.label, item)}\n`;
      if (l.kind) out += `${item}kind: ${yamlScalar(l.kind, item)}\n`;
    }
  }
  if (h.meta && Object.keys(h.meta).length > 0) out += 'meta:\n' + emitMap(h.meta, INDENT);
  if (h.ownerEpoch !== undefined && h.ownerEpoch > 0) out += `${OWNER_EPOCH_KEY}: ${Math.trunc(h.ownerEpoch)}\n`;
  if (h.trailingNewline) out += `${TRAILING_NEWLINE_KEY}: kept\n`;
  return out;
}

/** A header as read; `trailing_newline` is the body-encoding flag (format.ts), not a message field. */
export type ParsedHeader = Omit<BusMessage, 'body'> & { trailing_newline?: string };

const TRAILING_NEWLINE_KEY = 'trailing_newline';
const OWNER_EPOCH_KEY = 'owner_epoch';
const SIMPLE_KEYS = new Set(['msg_id', 'ts', 'type', 'project_id', 'task_id', 'run_id', 'issue_id', TRAILING_NEWLINE_KEY, OWNER_EPOCH_KEY]);

/** A positive integer epoch, or undefined (a malformed value is ignored, as upstream ignores the key). */
function epochOf(v: unknown): number | undefined {
  return typeof v === 'string' && /^[1-9]\d{0,14}$/.test(v) ? Number(v) : undefined;
}
const ZERO_TIME = new Date('0001-01-01T00:00:00Z');

function emptyHeader(): ParsedHeader {
  return { msg_id: '', ts: new Date(ZERO_TIME.getTime()), type: '', project_id: '', task_id: '', run_id: '' };
}

function unquoteDouble(v: string): string | undefined {
  if (v.length < 2 || !v.endsWith('"')) return undefined;
  const inner = v.slice(1, -1);
  if (!inner.includes('\\')) return inner.includes('"') ? undefined : inner;
  try {
    // Our emitter only produces escapes that JSON also understands, except \x.. which we map to \u00...
    return JSON.parse('"' + inner.replace(/\\x([0-9a-fA-F]{2})/g, '\\u00$1') + '"') as string;
  } catch {
    return undefined;
  }
}

// The layouts yaml.v3 accepts for time.Time: RFC3339 with T (zone required), a space-separated
// form without zone, or a bare date.
const TS_WITH_T = /^(\d{4})-(\d{1,2})-(\d{1,2})[Tt](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d+))?(Z|z|[+-]\d{2}:\d{2})$/;
const TS_WITH_SPACE = /^(\d{4})-(\d{1,2})-(\d{1,2}) (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d+))?()$/;
const TS_DATE = /^(\d{4})-(\d{1,2})-(\d{1,2})()()()()()$/;

export function parseTimestamp(text: string): Date | undefined {
  const t = text.trim();
  const m = TS_WITH_T.exec(t) ?? TS_WITH_SPACE.exec(t) ?? TS_DATE.exec(t);
  if (!m) return undefined;
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  const d = new Date(0);
  d.setUTCFullYear(+m[1], +m[2] - 1, +m[3]);
  d.setUTCHours(+(m[4] || 0), +(m[5] || 0), +(m[6] || 0), ms);
  if (d.getUTCMonth() !== +m[2] - 1 || d.getUTCDate() !== +m[3] || +(m[4] || 0) > 23 || +(m[5] || 0) > 59 || +(m[6] || 0) > 59) return undefined;
  const zone = m[8];
  if (zone && zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1 : 1;
    d.setTime(d.getTime() - sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60_000);
  }
  return d;
}

/** A one-line scalar of the fast layout (plain or double-quoted), or undefined (the YAML parser decides). */
function simpleValue(value: string): string | undefined {
  if (value.startsWith('"')) return unquoteDouble(value);
  return value === '' || (canBePlainValue(value) && value === value.trim()) ? value : undefined;
}

/** `key: value` (or `key:`) → [key, value], or undefined. */
function keyValue(l: string): [string, string] | undefined {
  const colon = l.indexOf(': ');
  const key = colon < 0 ? (l.endsWith(':') ? l.slice(0, -1) : '') : l.slice(0, colon);
  const value = simpleValue(colon < 0 ? '' : l.slice(colon + 2));
  return key === '' || value === undefined ? undefined : [key, value];
}

const LIST_KEYS: Record<string, Set<string>> = { parents: new Set(['msg_id', 'kind']), links: new Set(['url', 'label', 'kind']) };
const ITEM = `${INDENT}- `;
const ITEM_FIELD = `${INDENT}  `;
const PLAIN_KEY = /^[A-Za-z0-9_][A-Za-z0-9_./-]*$/;

/**
 * Fast path for headers in our own (and upstream's) usual layout, the one emitHeader writes:
 * `key: scalar` lines, and the `parents`/`links` lists and the `meta` map as emitHeader indents
 * them (one-line scalars only). Anything else answers undefined and goes to the YAML parser.
 */
function parseSimple(text: string): ParsedHeader | undefined {
  const h = emptyHeader();
  const rec = h as unknown as Record<string, string>;
  const lists: Record<string, Record<string, string>[]> = {};
  let meta: Record<string, string> | undefined;
  let section: 'parents' | 'links' | 'meta' | undefined;
  for (const line of text.split('\n')) {
    const l = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (l === '') continue;
    if (section && l.startsWith(INDENT)) {
      const items = section === 'meta' ? undefined : lists[section];
      const field = items && l.startsWith(ITEM) ? l.slice(ITEM.length) : items && l.startsWith(ITEM_FIELD) && items.length > 0 ? l.slice(ITEM_FIELD.length) : l.slice(INDENT.length);
      const kv = keyValue(field);
      if (!kv) return undefined;
      if (!items) {
        if (!PLAIN_KEY.test(kv[0])) return undefined;
        meta![kv[0]] = kv[1];
      } else {
        if (!LIST_KEYS[section].has(kv[0]) || field === l.slice(INDENT.length)) return undefined;
        if (l.startsWith(ITEM)) items.push({});
        items[items.length - 1][kv[0]] = kv[1];
      }
      continue;
    }
    section = undefined;
    if (l === 'parents:' || l === 'links:' || l === 'meta:') {
      section = l.slice(0, -1) as 'parents' | 'links' | 'meta';
      if (section === 'meta' ? meta : lists[section]) return undefined;
      if (section === 'meta') meta = {};
      else lists[section] = [];
      continue;
    }
    const kv = keyValue(l);
    if (!kv || !SIMPLE_KEYS.has(kv[0])) return undefined;
    const [key, value] = kv;
    if (key === 'ts') {
      const ts = parseTimestamp(value);
      if (!ts) return undefined;
      h.ts = ts;
    } else if (key === OWNER_EPOCH_KEY) {
      const epoch = epochOf(value);
      if (epoch !== undefined) h.owner_epoch = epoch;
    } else {
      rec[key] = value;
    }
  }
  // as parseGeneric builds them from the YAML document
  if (lists.parents?.length) h.parents = lists.parents.map((p) => (p.kind ? { msg_id: p.msg_id ?? '', kind: p.kind } : { msg_id: p.msg_id ?? '' }));
  if (lists.links?.length) h.links = lists.links.map((k) => ({ url: k.url ?? '', ...(k.label ? { label: k.label } : {}), ...(k.kind ? { kind: k.kind } : {}) }));
  if (meta && Object.keys(meta).length > 0) h.meta = meta;
  return h;
}

function canBePlainValue(v: string): boolean {
  return !INDICATOR_START.test(v) && !v.includes(' #') && !v.includes(': ');
}

function str(v: unknown, what: string): string {
  if (v === null || v === undefined) return '';
  if (typeof v !== 'string') throw new BusError('INVALID_MESSAGE', `header field ${what} is not a string`);
  return v;
}

function strMap(v: unknown, what: string): Record<string, string> | undefined {
  if (v === null || v === undefined || v === '') return undefined; // failsafe reads `key:` as ''
  if (typeof v !== 'object' || Array.isArray(v)) throw new BusError('INVALID_MESSAGE', `header field ${what} is not a map`);
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) out[k] = str(val, `${what}.${k}`);
  return out;
}

/** The YAML parser's reading of a header (exported for the tests that compare it with the fast path). */
export function parseGeneric(text: string): ParsedHeader {
  // Failsafe schema: every scalar stays the exact string written, as Go decodes into string fields.
  const doc = parseYaml(text, { schema: 'failsafe', uniqueKeys: false });
  const h = emptyHeader();
  if (doc === null || doc === undefined || doc === '') return h;
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new BusError('INVALID_MESSAGE', 'header is not a map');
  const d = doc as Record<string, unknown>;
  h.msg_id = str(d.msg_id, 'msg_id');
  h.type = str(d.type, 'type');
  h.project_id = str(d.project_id, 'project_id');
  h.task_id = str(d.task_id, 'task_id');
  h.run_id = str(d.run_id, 'run_id');
  const issue = str(d.issue_id, 'issue_id');
  if (issue) h.issue_id = issue;
  const kept = str(d[TRAILING_NEWLINE_KEY], TRAILING_NEWLINE_KEY);
  if (kept) h.trailing_newline = kept;
  const epoch = epochOf(d[OWNER_EPOCH_KEY]);
  if (epoch !== undefined) h.owner_epoch = epoch;
  const tsText = str(d.ts, 'ts');
  if (tsText) {
    const ts = parseTimestamp(tsText);
    if (!ts) throw new BusError('INVALID_MESSAGE', `header field ts is not a time: ${tsText}`);
    h.ts = ts;
  }
  if (Array.isArray(d.parents) && d.parents.length > 0) {
    const parents: BusParent[] = [];
    for (const p of d.parents as unknown[]) {
      if (typeof p === 'string') {
        if (p) parents.push({ msg_id: p });
      } else if (p && typeof p === 'object' && !Array.isArray(p)) {
        const rec = p as Record<string, unknown>;
        const parent: BusParent = { msg_id: str(rec.msg_id, 'parents.msg_id') };
        const kind = str(rec.kind, 'parents.kind');
        if (kind) parent.kind = kind;
        const meta = strMap(rec.meta, 'parents.meta');
        if (meta && Object.keys(meta).length > 0) parent.meta = meta;
        parents.push(parent);
      }
    }
    if (parents.length > 0) h.parents = parents;
  }
  if (d.links !== undefined && d.links !== null && d.links !== '' && !Array.isArray(d.links)) throw new BusError('INVALID_MESSAGE', 'header field links is not a list');
  if (Array.isArray(d.links) && d.links.length > 0) {
    h.links = (d.links as unknown[]).map((l) => {
      if (typeof l !== 'object' || l === null || Array.isArray(l)) throw new BusError('INVALID_MESSAGE', 'header field links holds a non-map item');
      const rec = l as Record<string, unknown>;
      const link: BusLink = { url: str(rec.url, 'links.url') };
      const label = str(rec.label, 'links.label');
      const kind = str(rec.kind, 'links.kind');
      if (label) link.label = label;
      if (kind) link.kind = kind;
      return link;
    });
  }
  const meta = strMap(d.meta, 'meta');
  if (meta && Object.keys(meta).length > 0) h.meta = meta;
  return h;
}

/** Parses a header; throws on YAML the upstream reader would reject (the caller re-syncs). */
export function parseHeader(text: string): ParsedHeader {
  return parseSimple(text) ?? parseGeneric(text);
}
