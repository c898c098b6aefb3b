// The CLI bundle's lazy barrels (scripts/cli-bundle/lazy-barrel-loader.js): an index file that only
// re-exports loads each file on the first read of one of its exports, with the same exports.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const loader = require('../../../scripts/cli-bundle/lazy-barrel-loader.js') as (this: { resourcePath: string }, source: string) => string;

// what tsc emits for `export * from './a'; export { B } from './b'; export * from './c';`
const BARREL = `"use strict";
var __createBinding = (this && this.__createBinding) || (Object.create ? (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    Object.defineProperty(o, k2, { enumerable: true, get: function() { return m[k]; } });
}) : (function(o, m, k, k2) { if (k2 === undefined) k2 = k; o[k2] = m[k]; }));
var __exportStar = (this && this.__exportStar) || function(m, exports) {
    for (var p in m) if (p !== "default" && !Object.prototype.hasOwnProperty.call(exports, p)) __createBinding(exports, m, p);
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.B = void 0;
__exportStar(require("./a"), exports);
var b_1 = require("./b");
Object.defineProperty(exports, "B", { enumerable: true, get: function () { return b_1.B; } });
__exportStar(require("./c"), exports);
`;
const part = (name: string, body: string) => `"use strict";\n(globalThis.loaded ??= []).push(${JSON.stringify(name)});\n${body}\n`;

describe('lazy barrels in the CLI bundle', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'barrel-'));
    writeFileSync(join(dir, 'a.js'), part('a', 'exports.A = "a"; exports.Shared = "from a"; exports.default = "no";'));
    writeFileSync(join(dir, 'b.js'), part('b', 'exports.B = "b"; exports.Other = "not re-exported";'));
    writeFileSync(join(dir, 'c.js'), part('c', 'exports.C = "c"; exports.Shared = "from c"; exports.B = "not this B";'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('loads a re-exported file only when one of its exports is read, with the same exports as before', () => {
    writeFileSync(join(dir, 'eager.js'), BARREL);
    writeFileSync(join(dir, 'index.js'), loader.call({ resourcePath: join(dir, 'index.js') }, BARREL));
    const script = `
      const out = {};
      const eager = require('./eager.js');
      out.eagerKeys = Object.keys(eager).sort();
      out.eagerValues = [eager.A, eager.B, eager.C, eager.Shared];
      globalThis.loaded = [];
      for (const f of ['./a.js', './b.js', './c.js']) delete require.cache[require.resolve(f)];
      const lazy = require('./index.js');
      out.atLoad = [...globalThis.loaded];
      out.keys = Object.keys(lazy).sort();
      out.afterKeys = [...globalThis.loaded];
      out.values = [lazy.C, lazy.B, lazy.A, lazy.Shared];
      out.order = globalThis.loaded;
      process.stdout.write(JSON.stringify(out));`;
    const r = spawnSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(out.eagerValues).toEqual(['a', 'b', 'c', 'from a']);
    expect(out.atLoad).toEqual([]);
    expect(out.keys).toEqual(out.eagerKeys);
    expect(out.afterKeys).toEqual([]);
    expect(out.values).toEqual(['c', 'b', 'a', 'from a']);
    expect(out.order).toEqual(['c', 'b', 'a']);
  });

  it('leaves a file with anything but re-exports as it is', () => {
    const other = `${BARREL}console.log("side effect");\n`;
    expect(loader.call({ resourcePath: join(dir, 'index.js') }, other)).toBe(other);
    const plain = '"use strict";\nexports.x = 1;\n';
    expect(loader.call({ resourcePath: join(dir, 'index.js') }, plain)).toBe(plain);
  });
});
