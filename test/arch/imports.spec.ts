import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * Import rules of issue #32 (docs/architecture.md, "Import rules"): no app imports another app; a
 * lib is imported through its index (`@app/x`), deep paths (`@app/x/y`) only where DEEP_IMPORTS
 * lists them; the libs import each other without cycles, type-only imports included.
 */

const root = join(__dirname, '..', '..');

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return tsFiles(full);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [full] : [];
  });
}

/** Every module specifier of a source: `import … from`, `export … from`, `import type`, `require(…)`, `import(…)`. */
const SPECIFIER = /(?:\bfrom\s+|\brequire\(\s*|\bimport\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;

export function specifiersOf(text: string): string[] {
  return [...text.matchAll(SPECIFIER)].map((m) => m[1]);
}

/** Repo-relative source file → its text. */
type Sources = Map<string, string>;

function readSources(...dirs: string[]): Sources {
  const sources: Sources = new Map();
  for (const d of dirs) for (const f of tsFiles(join(root, d))) sources.set(relative(root, f).split(sep).join('/'), readFileSync(f, 'utf8'));
  return sources;
}

const appOf = (file: string): string | undefined => /^apps\/([^/]+)\//.exec(file)?.[1];

/** Imports of one app that reach into another: a relative path landing in another app's folder, or an `apps/…` specifier. */
export function crossAppImports(sources: Sources): string[] {
  const bad: string[] = [];
  for (const [file, text] of sources) {
    const app = appOf(file);
    if (!app) continue;
    for (const spec of specifiersOf(text)) {
      let target: string | undefined;
      if (spec.startsWith('.')) target = relative(root, resolve(root, dirname(file), spec)).split(sep).join('/');
      else if (/(^|\/)apps\//.test(spec)) target = spec.slice(spec.indexOf('apps/'));
      const other = target && appOf(`${target}/`);
      if (other && other !== app) bad.push(`${file} → ${spec}`);
    }
  }
  return bad;
}

/**
 * The deep imports that stay, each with its reason. `from`: the importing files (a path, or a
 * folder ending in `/`); `to`: the deep specifiers it may use.
 */
export const DEEP_IMPORTS: Array<{ from: string; to: RegExp; reason: string }> = [
  {
    from: 'apps/',
    to: /^@app\/boot\/lean-load$/,
    reason: 'start-up require-cache stand-ins: imported first by apps/*/src/boot only, before anything else loads; the CLI bundle drops them',
  },
  {
    from: 'apps/cli/src/main.ts',
    to: /^@app\/runner\/pending-child$/,
    reason: 'the CLI entry registers the pending-child hook without loading the runner barrel (every command pays for it)',
  },
  {
    from: 'apps/cli/src/commands/bus/',
    to: /^@app\/(storage|messagebus)\/[\w./-]+$/,
    reason: 'hot path: `bus post`/`bus read` run on a fast path that loads single plain modules, not the storage and messagebus barrels',
  },
  {
    from: 'libs/messagebus/src/',
    to: /^@app\/storage\/[\w./-]+$/,
    reason: 'the bus writer and reader are on the same hot path: plain storage modules, not its barrel (NestJS module, providers)',
  },
  {
    from: 'libs/boot/src/serve-flags.ts',
    to: /^@app\/storage\/config\/config\.types$/,
    reason: 'bin/launch.js requires the serve flags before the server: plain modules only (test/e2e/server/api-bundle.e2e-spec.ts lists them)',
  },
];

/** `@app/x/y` imports that DEEP_IMPORTS does not allow. */
export function unlistedDeepImports(sources: Sources, allowed = DEEP_IMPORTS): string[] {
  const bad: string[] = [];
  for (const [file, text] of sources) {
    for (const spec of specifiersOf(text)) {
      if (!/^@app\/[^/]+\/.+/.test(spec)) continue;
      const ok = allowed.some((a) => (a.from.endsWith('/') ? file.startsWith(a.from) : file === a.from) && a.to.test(spec));
      if (!ok) bad.push(`${file} → ${spec}`);
    }
  }
  return bad;
}

/**
 * Packages that cost the hot commands milliseconds to load, and the only files that may load them
 * at run time: the lazy door the rest goes through, loading the package on first use
 * (docs/decisions/startup-and-memory.md), and for `yaml` the config loader, which needs the
 * document API. Type-only imports are free.
 */
export const LAZY_PACKAGES: Record<string, string[]> = {
  yaml: ['libs/storage/src/lazy-yaml.ts', 'libs/storage/src/config/raw-config.ts'],
  'fs-ext': ['libs/storage/src/flock.ts'],
};

/** `file → package` for each import or require of a LAZY_PACKAGES package outside its listed files. */
export function eagerPackageLoads(sources: Sources, lazy = LAZY_PACKAGES): string[] {
  const bad: string[] = [];
  for (const [file, text] of sources) {
    const runtime = specifiersOf(text.replace(/^\s*import\s+type\s[^;]*;/gm, ''));
    for (const [pkg, doors] of Object.entries(lazy)) if (!doors.includes(file) && runtime.includes(pkg)) bad.push(`${file} → ${pkg}`);
  }
  return bad;
}

/** Lib → libs it imports (`@app/x` or `@app/x/…`, type-only imports included). */
export function libGraph(sources: Sources): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const [file, text] of sources) {
    const lib = /^libs\/([^/]+)\//.exec(file)?.[1];
    if (!lib) continue;
    const deps = graph.get(lib) ?? new Set<string>();
    graph.set(lib, deps);
    for (const spec of specifiersOf(text)) {
      const dep = /^@app\/([^/]+)/.exec(spec)?.[1];
      if (dep && dep !== lib) deps.add(dep);
    }
  }
  return graph;
}

/** The cycles of a graph, each as `a → b → … → a` (one per strongly connected part found by DFS). */
export function cyclesOf(graph: Map<string, Set<string>>): string[] {
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    path.push(node);
    for (const next of [...(graph.get(node) ?? [])].sort()) {
      if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), next].join(' → '));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return cycles;
}

describe('import rules', () => {
  const sources = readSources('apps', 'libs');

  it('reads the sources of both apps and the libs', () => {
    expect([...sources.keys()].some((f) => f.startsWith('apps/api/'))).toBe(true);
    expect([...sources.keys()].some((f) => f.startsWith('apps/cli/'))).toBe(true);
    expect([...sources.keys()].some((f) => f.startsWith('libs/'))).toBe(true);
  });

  it('no app imports another app', () => {
    expect(crossAppImports(sources)).toEqual([]);
  });

  it('libs are imported through their index, deep paths only where listed', () => {
    expect(unlistedDeepImports(sources)).toEqual([]);
  });

  it('every listed deep import is still used (the list stays short)', () => {
    const used = (a: (typeof DEEP_IMPORTS)[number]) =>
      [...sources].some(([file, text]) => (a.from.endsWith('/') ? file.startsWith(a.from) : file === a.from) && specifiersOf(text).some((s) => a.to.test(s)));
    expect(DEEP_IMPORTS.filter((a) => !used(a)).map((a) => a.from)).toEqual([]);
  });

  it('the libs import each other without cycles (type-only imports included)', () => {
    expect(cyclesOf(libGraph(sources))).toEqual([]);
  });

  it('yaml and fs-ext load only through their lazy doors', () => {
    expect(eagerPackageLoads(sources)).toEqual([]);
    expect(Object.values(LAZY_PACKAGES).flat().filter((f) => !sources.has(f))).toEqual([]);
  });

  describe('each rule sees a violation', () => {
    it('a relative import into the other app, and an apps/ specifier', () => {
      const planted: Sources = new Map([
        ['apps/cli/src/commands/x.ts', "import { a } from '../../../api/src/boot/serve';\n"],
        ['apps/api/src/y.ts', "import type { B } from 'apps/cli/src/b';\nimport { c } from './c';\n"],
      ]);
      expect(crossAppImports(planted)).toEqual(['apps/cli/src/commands/x.ts → ../../../api/src/boot/serve', 'apps/api/src/y.ts → apps/cli/src/b']);
    });

    it('an unlisted deep import, also type-only and re-exported', () => {
      const planted: Sources = new Map([
        ['apps/api/src/z.ts', "import type { T } from '@app/runner/job';\nexport { u } from '@app/storage/layout';\nimport { ok } from '@app/storage';\n"],
        ['apps/cli/src/commands/bus/bus-post.ts', "import { w } from '@app/messagebus/writer';\n"],
      ]);
      expect(unlistedDeepImports(planted)).toEqual(['apps/api/src/z.ts → @app/runner/job', 'apps/api/src/z.ts → @app/storage/layout']);
    });

    it('a lazy package loaded outside its door, but not a type-only import', () => {
      const planted: Sources = new Map([
        ['libs/runner/src/a.ts', "import { parse } from 'yaml';\n"],
        ['apps/cli/src/b.ts', "const f = require('fs-ext');\n"],
        ['libs/worktree/src/c.ts', "import type { ToStringOptions } from 'yaml';\nimport { parseYaml } from '@app/storage';\n"],
        ['libs/storage/src/lazy-yaml.ts', "const yaml = () => require('yaml');\n"],
      ]);
      expect(eagerPackageLoads(planted)).toEqual(['libs/runner/src/a.ts → yaml', 'apps/cli/src/b.ts → fs-ext']);
    });

    it('a cycle through a type-only import', () => {
      const planted: Sources = new Map([
        ['libs/storage/src/a.ts', "import type { R } from '@app/runner';\n"],
        ['libs/runner/src/b.ts', "import { s } from '@app/storage';\n"],
        ['libs/client/src/c.ts', "import { s } from '@app/storage';\n"],
      ]);
      expect(cyclesOf(libGraph(planted))).toEqual(['storage → runner → storage']);
    });
  });
});
