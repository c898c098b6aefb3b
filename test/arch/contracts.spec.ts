import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as ts from 'typescript';

const root = join(__dirname, '..', '..');

function files(dir: string, ext: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name === 'node_modules' || name === 'dist') return [];
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return files(full, ext);
    return ext.test(name) ? [full] : [];
  });
}

const rel = (f: string) => relative(root, f);
const sourceFiles = [...files(join(root, 'apps'), /\.ts$/), ...files(join(root, 'libs'), /\.ts$/)];

/** Statements that import from `spec` (import/export … from, require, import()). */
function importsOf(text: string, spec: RegExp): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"];?/gms)) if (spec.test(m[1])) out.push(m[0]);
  for (const m of text.matchAll(/(?:require|import)\(\s*['"]([^'"]+)['"]\s*\)/g)) if (spec.test(m[1])) out.push(m[0]);
  return out;
}

describe('one wire contract (libs/contracts)', () => {
  const contractFiles = files(join(root, 'libs', 'contracts', 'src'), /\.ts$/);

  it('finds the contract sources', () => {
    expect(contractFiles.map(rel)).toEqual(expect.arrayContaining(['libs/contracts/src/index.ts', 'libs/contracts/src/runs.ts']));
  });

  it.each(contractFiles.map((f) => [rel(f), f]))('%s is types only: it compiles to no runtime code and imports nothing', (_n, file) => {
    const text = readFileSync(file, 'utf8');
    const js = ts.transpileModule(text, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
    const code = js
      .replace(/\/\/.*$/gm, '')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/"use strict";/, '')
      .replace(/Object\.defineProperty\(exports, "__esModule", \{ value: true \}\);/, '')
      .trim();
    expect(code).toBe('');
    expect(importsOf(text, /^(?!\.\/)/)).toEqual([]);
  });

  it('apps and libs import the contract as types only', () => {
    const bad = sourceFiles.flatMap((f) => importsOf(readFileSync(f, 'utf8'), /^@app\/contracts/).filter((s) => !/^(import|export) type /.test(s)).map((s) => `${rel(f)}: ${s}`));
    expect(bad).toEqual([]);
  });

  it('the frontend reaches the server tree only through `import type` of @app/contracts', () => {
    const front = files(join(root, 'frontend', 'src'), /\.(ts|tsx)$/);
    expect(front.length).toBeGreaterThan(0);
    const bad = front.flatMap((f) => {
      const text = readFileSync(f, 'utf8');
      const crossing = importsOf(text, /^@app\/|(\.\.\/){2,}(libs|apps)\//);
      return crossing.filter((s) => !/^(import|export) type [^;]*from '@app\/contracts'/.test(s)).map((s) => `${rel(f)}: ${s}`);
    });
    expect(bad).toEqual([]);
    expect(readFileSync(join(root, 'frontend', 'src', 'api', 'types.ts'), 'utf8')).toMatch(/from '@app\/contracts'/);
  });
});

describe('one place per rule', () => {
  it("the run-info file name is typed once (libs/storage/src/layout-names.ts)", () => {
    const hits = sourceFiles.filter((f) => readFileSync(f, 'utf8').includes("'run-info.yaml'")).map(rel);
    expect(hits).toEqual(['libs/storage/src/layout-names.ts']);
  });

  it("a task's runs folder is joined in one place (taskRunsDir, libs/storage/src/run-files.ts)", () => {
    const hits = sourceFiles.filter((f) => /join\([^()]*,\s*'runs'\)/.test(readFileSync(f, 'utf8'))).map(rel);
    // the home default `~/.run-agent/runs` is the runs root, not a task's runs folder
    expect(hits.filter((f) => f !== 'libs/storage/src/config/runs-root.ts')).toEqual([]);
  });

  it('the default API port is written once (libs/storage/src/config/config.types.ts)', () => {
    const hits = sourceFiles.filter((f) => /(?<![\d.])14355(?!\d)/.test(readFileSync(f, 'utf8').replace(/^\s*(\/\/|\/?\*|@Option).*$/gm, ''))).map(rel);
    expect(hits).toEqual(['libs/storage/src/config/config.types.ts']);
  });

  it('$CONDUCTOR_CONFIG and the default config lookup are read in one place (config/settings.ts)', () => {
    const hits = sourceFiles
      .filter((f) => /env\.CONDUCTOR_CONFIG\b[^=]*\|\||findConfigFile\(/.test(readFileSync(f, 'utf8')))
      .map(rel)
      .filter((f) => f !== 'libs/storage/src/config/paths.ts');
    expect(hits).toEqual(['libs/storage/src/config/settings.ts']);
  });
});

describe('thin entrances', () => {
  /**
   * The Nest-free fast path door (apps/cli/src/main.ts → fast-path.ts, docs/architecture.md) and
   * the files it loads: they may not load the lib barrels, so the few filesystem calls of
   * `--version` (package.json) and `bus post` (stdin, the project folder) stay in them.
   */
  const FAST_PATH_DOOR = ['apps/cli/src/version.ts', 'apps/cli/src/commands/bus/bus-post.ts'];
  // every API controller, and every file of the CLI (commands, their helpers, the boot files)
  const cliFiles = files(join(root, 'apps', 'cli', 'src'), /\.ts$/).map(rel);
  const thin = [...files(join(root, 'apps', 'api', 'src'), /\.controller\.ts$/).map(rel), ...cliFiles.filter((f) => !FAST_PATH_DOOR.includes(f))];
  it('sees the controllers and the commands', () => {
    expect(thin).toEqual(
      expect.arrayContaining([
        'apps/api/src/projects/projects.controller.ts',
        'apps/api/src/runs/runs.controller.ts',
        'apps/api/src/usage/usage.controller.ts',
        'apps/cli/src/commands/engine/status.command.ts',
        'apps/cli/src/commands/engine/watch.command.ts',
        'apps/cli/src/commands/engine/shell-setup.command.ts',
        'apps/cli/src/commands/inspect/validate.command.ts',
        'apps/cli/src/commands/bus/bus-scope.ts',
        'apps/cli/src/main.ts',
        'apps/cli/src/fast-path.ts',
      ]),
    );
    expect(FAST_PATH_DOOR.every((f) => cliFiles.includes(f))).toBe(true);
  });
  it.each(thin)('%s does no filesystem or process work itself', (file) => {
    const text = readFileSync(join(root, file), 'utf8');
    expect(importsOf(text, /^(node:)?(fs|child_process|fs\/promises)$/)).toEqual([]);
  });
});
