import { extname } from 'node:path';
import { Document, isNode, LineCounter, parseDocument } from 'yaml';
import { parseHcl } from './hcl';

/** Raised while reading the raw document: becomes `config <path>: <message>`. */
export class ConfigProblem extends Error {}

/** Typed access to the raw parsed object with YAML line numbers for error messages. */
export class RawReader {
  constructor(
    private readonly data: Record<string, any>,
    private readonly doc?: Document,
    private readonly lines?: LineCounter,
  ) {}

  private where(path: (string | number)[]): string {
    if (!this.doc || !this.lines) return '';
    const node = this.doc.getIn(path, true);
    if (!isNode(node) || !node.range) return '';
    return `line ${this.lines.linePos(node.range[0]).line}: `;
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
    throw new ConfigProblem(`${this.where(path)}${path.join('.')} ${problem}`);
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
    const pos = first.linePos?.[0];
    const message = first.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
    throw new ConfigProblem(`parse config: ${pos ? `line ${pos.line}: ` : ''}${message}`);
  }
  const data = doc.toJS() ?? {};
  if (typeof data !== 'object' || Array.isArray(data)) throw new ConfigProblem('parse config: line 1: top level must be a mapping');
  return new RawReader(data as Record<string, any>, doc, lines);
}
