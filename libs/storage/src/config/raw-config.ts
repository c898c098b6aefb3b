import { extname } from 'node:path';
import { Document, isMap, isNode, isScalar, LineCounter, parseDocument } from 'yaml';
import { parseGoDuration } from './duration';
import { parseHcl } from './hcl';

export interface ConfigPosition {
  line: number;
  col: number;
}

/** Raised while reading the raw document: becomes `<path>:<line>:<col>: <key>: <message>` (see formatConfigProblem). */
export class ConfigProblem extends Error {
  constructor(
    message: string,
    readonly key?: string,
    readonly pos?: ConfigPosition,
  ) {
    super(message);
  }
}

/** `agents.claude.args[0]` for ['agents', 'claude', 'args', 0]. */
export function configKeyName(path: readonly (string | number)[]): string {
  return path.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join('');
}

/** The one line every config error is shown as: the file, line and column when known, the key when known. */
export function formatConfigProblem(file: string, problem: string, key?: string, pos?: ConfigPosition): string {
  return `${file}${pos ? `:${pos.line}:${pos.col}` : ''}: ${key ? `${key}: ` : ''}${problem}`;
}

/** Typed access to the raw parsed object with YAML line numbers for error messages. */
export class RawReader {
  constructor(
    private readonly data: Record<string, any>,
    private readonly doc?: Document,
    private readonly lines?: LineCounter,
  ) {}

  /** Where a key is written (its key node; else its value; else the nearest written parent). */
  position(path: readonly (string | number)[]): ConfigPosition | undefined {
    if (!this.doc || !this.lines) return undefined;
    for (let n = path.length; n > 0; n--) {
      const parent = n === 1 ? this.doc.contents : this.doc.getIn(path.slice(0, n - 1), true);
      const last = path[n - 1];
      if (isMap(parent)) {
        const pair = parent.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) == last);
        const keyNode = pair?.key;
        if (isNode(keyNode) && keyNode.range) return this.lines.linePos(keyNode.range[0]);
      }
      const node = this.doc.getIn(path.slice(0, n), true);
      if (isNode(node) && node.range) return this.lines.linePos(node.range[0]);
    }
    return undefined;
  }

  get(path: (string | number)[]): unknown {
    let cur: any = this.data;
    for (const key of path) {
      if (cur === null || typeof cur !== 'object') return undefined;
      cur = cur[key];
    }
    return cur;
  }

  fail(path: (string | number)[], problem: string): never {
    throw new ConfigProblem(problem, configKeyName(path), this.position(path));
  }

  str(path: (string | number)[]): string {
    const v = this.get(path);
    if (v === undefined || v === null) return '';
    if (typeof v === 'object') this.fail(path, 'must be a string');
    return String(v);
  }

  int(path: (string | number)[]): number {
    const v = this.get(path);
    if (v === undefined || v === null) return 0;
    if (typeof v === 'number' && Number.isInteger(v)) return v;
    return this.fail(path, `must be an integer, got ${JSON.stringify(v)}`);
  }

  /**
   * A Go duration between `minMs` and `maxMs`, in milliseconds (undefined when the key is empty);
   * outside or unreadable: `must be a duration between <bounds> like <example>`.
   */
  durationBetween(path: (string | number)[], minMs: number, maxMs: number, bounds: string, example: string): number | undefined {
    const text = this.str(path).trim();
    if (text === '') return undefined;
    let ms = NaN;
    try {
      ms = parseGoDuration(text);
    } catch {
      // reported below
    }
    if (!(ms >= minMs && ms <= maxMs)) this.fail(path, `must be a duration between ${bounds} like ${example}, got ${JSON.stringify(text)}`);
    return ms;
  }

  bool(path: (string | number)[]): boolean {
    const v = this.get(path);
    if (v === undefined || v === null) return false;
    if (typeof v === 'boolean') return v;
    return this.fail(path, `must be true or false, got ${JSON.stringify(v)}`);
  }

  map(path: (string | number)[]): Record<string, unknown> {
    const v = this.get(path);
    if (v === undefined || v === null) return {};
    if (typeof v !== 'object' || Array.isArray(v)) this.fail(path, 'must be a mapping');
    return v as Record<string, unknown>;
  }

  list(path: (string | number)[]): unknown[] {
    const v = this.get(path);
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) this.fail(path, 'must be a list');
    return v as unknown[];
  }

  strList(path: (string | number)[]): string[] {
    return this.list(path).map((_v, i) => this.str([...path, i]));
  }

  intList(path: (string | number)[]): number[] {
    return this.list(path).map((_v, i) => this.int([...path, i]));
  }
}

/** Parses YAML (or the HCL subset for `.hcl`) into a RawReader; syntax errors carry line numbers. */
export function readRawConfig(path: string, text: string): RawReader {
  if (extname(path) === '.hcl') {
    try {
      return new RawReader(parseHcl(text));
    } catch (err) {
      throw new ConfigProblem((err as Error).message);
    }
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: false });
  const first = doc.errors[0];
  if (first) {
    const message = first.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
    const key = keyBefore(doc.contents, first.pos[0]);
    throw new ConfigProblem(`YAML syntax error: ${message}`, key.length ? configKeyName(key) : undefined, first.linePos?.[0] ?? lines.linePos(first.pos[0]));
  }
  const data = doc.toJS() ?? {};
  if (typeof data !== 'object' || Array.isArray(data)) throw new ConfigProblem('the top level must be a mapping', undefined, { line: 1, col: 1 });
  return new RawReader(data as Record<string, any>, doc, lines);
}

/** The key a syntax error at `offset` belongs to: the last key written before it, innermost first. */
function keyBefore(node: unknown, offset: number): (string | number)[] {
  if (!isMap(node)) return [];
  let best: { key: string | number; value: unknown } | undefined;
  for (const pair of node.items) {
    const k = pair.key;
    if (!isNode(k) || !k.range || k.range[0] >= offset) break;
    const name = isScalar(k) ? k.value : undefined;
    if (typeof name !== 'string' && typeof name !== 'number') break;
    best = { key: name, value: pair.value };
  }
  if (!best) return [];
  const v = best.value;
  const inside = isNode(v) && v.range && v.range[0] <= offset && offset <= v.range[2] && !(isMap(v) && v.flow);
  return [best.key, ...(inside ? keyBefore(v, offset) : [])];
}
