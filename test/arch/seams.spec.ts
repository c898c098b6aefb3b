import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import * as ts from 'typescript';

/**
 * Seam rules of issue #32 (docs/architecture.md, "Seams"): bus writers and the runs layout are made
 * by their owners only and handed down like the executor; file names are written through their
 * constants; command and controller files stay thin. Parsed with the TypeScript compiler API.
 */

const root = join(__dirname, '..', '..');

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return tsFiles(full);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') && !name.endsWith('.d.ts') ? [full] : [];
  });
}

/** Repo-relative source file → its text. */
type Sources = Map<string, string>;

function readSources(...dirs: string[]): Sources {
  const sources: Sources = new Map();
  for (const d of dirs) for (const f of tsFiles(join(root, d))) sources.set(relative(root, f).split(sep).join('/'), readFileSync(f, 'utf8'));
  return sources;
}

function walk(file: string, text: string, visit: (node: ts.Node, sf: ts.SourceFile) => void): void {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const go = (node: ts.Node): void => {
    visit(node, sf);
    ts.forEachChild(node, go);
  };
  go(sf);
}

// ---------------------------------------------------------------------------------------------
// 1. `new BusWriter(` / `new RunsLayout(` only in their owners
// ---------------------------------------------------------------------------------------------

/** Who may construct: the owning lib (its factory) and the composition roots. */
export const CONSTRUCTORS: Record<string, { owners: string[]; reason: string }> = {
  BusWriter: {
    owners: ['libs/messagebus/src/'],
    reason: 'createBusWriters / MessageBusService.writer of @app/messagebus; the parts take a BusWriters factory',
  },
  RunsLayout: {
    owners: ['libs/storage/src/', 'apps/api/src/server.ts'],
    reason: 'the storage providers (StorageIndex.layout) and the server composition root; the parts take the layout',
  },
};

/**
 * Files still constructing outside the owners, with how many `new` sites each has today. The list
 * only shrinks: a file over its count, or not listed, fails; a count above today's use fails too
 * (lower it when a site is converted).
 */
export const REMAINING_CONSTRUCTIONS: Record<string, number> = {};

const isOwner = (file: string, owners: string[]) => owners.some((o) => (o.endsWith('/') ? file.startsWith(o) : file === o));

/** `new BusWriter(` / `new RunsLayout(` sites outside the owners: file → count. */
export function constructionsOutsideOwners(sources: Sources): Map<string, number> {
  const found = new Map<string, number>();
  for (const [file, text] of sources) {
    if (!/new\s+(BusWriter|RunsLayout)\b/.test(text)) continue;
    walk(file, text, (node) => {
      if (!ts.isNewExpression(node)) return;
      const name = ts.isIdentifier(node.expression) ? node.expression.text : ts.isPropertyAccessExpression(node.expression) ? node.expression.name.text : '';
      const rule = CONSTRUCTORS[name];
      if (rule && !isOwner(file, rule.owners)) found.set(file, (found.get(file) ?? 0) + 1);
    });
  }
  return found;
}

/** Sites beyond the allowlist (`file: n > allowed`), and allowlist entries above today's use. */
export function constructionProblems(found: Map<string, number>, allowed = REMAINING_CONSTRUCTIONS): { over: string[]; stale: string[] } {
  const over = [...found].filter(([f, n]) => n > (allowed[f] ?? 0)).map(([f, n]) => `${f}: ${n} > ${allowed[f] ?? 0}`);
  const stale = Object.entries(allowed)
    .filter(([f, n]) => (found.get(f) ?? 0) < n)
    .map(([f, n]) => `${f}: listed ${n}, uses ${found.get(f) ?? 0}`);
  return { over, stale };
}

// ---------------------------------------------------------------------------------------------
// 2. No file-name literal that has a constant
// ---------------------------------------------------------------------------------------------

/** A file-name constant: `export const X_FILE = '…'` (also `_MARKER`, `_DIR_NAME`). */
const CONSTANT_DECL = /^export const ([A-Z][A-Z0-9_]*_(?:FILE|MARKER|DIR_NAME)) = '([^']+)';$/gm;

/** Value → the files defining it (`NAME@file`). */
export function fileNameConstants(sources: Sources): Map<string, string[]> {
  const byValue = new Map<string, string[]>();
  for (const [file, text] of sources) {
    for (const m of text.matchAll(CONSTANT_DECL)) byValue.set(m[2], [...(byValue.get(m[2]) ?? []), `${m[1]}@${file}`]);
  }
  return byValue;
}

/** Callees whose string arguments are paths or file names. */
const PATH_CALL = /(^|\.)(join|resolve|basename|existsSync|readFileSync|writeFileSync|rmSync|statSync|unlinkSync|openSync|renameSync|pathExists|readIfExists|runFilePath)$/;

/**
 * String literals equal to a file-name constant's value outside the file defining it. A value
 * that reads as a file name (has a dot or a hyphen) counts anywhere; a bare word (`DONE`, `runs`:
 * also a status word, a table header, a JSON field) only where a path is built or compared — an
 * argument of a path call, or compared with `basename(…)`.
 */
export function fileNameLiterals(sources: Sources, constants = fileNameConstants(sources), stay = LITERALS_THAT_STAY): string[] {
  const bad: string[] = [];
  for (const [file, text] of sources) {
    walk(file, text, (node, sf) => {
      if (!ts.isStringLiteral(node) && !ts.isNoSubstitutionTemplateLiteral(node)) return;
      const defs = constants.get(node.text);
      if (!defs) return;
      if (defs.length === 1 && defs[0].endsWith(`@${file}`)) return;
      if (stay[file]?.values.includes(node.text)) return;
      if (ts.isImportDeclaration(node.parent) || ts.isExportDeclaration(node.parent) || ts.isExternalModuleReference(node.parent)) return;
      if (!/[.-]/.test(node.text) && !inPathContext(node)) return;
      const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
      bad.push(`${file}:${line} '${node.text}' (${defs.map((d) => d.split('@')[0]).join(', ')})`);
    });
  }
  return bad;
}

function inPathContext(node: ts.Node): boolean {
  const p = node.parent;
  if (ts.isCallExpression(p) && p.arguments.includes(node as ts.Expression)) return PATH_CALL.test(p.expression.getText());
  if (ts.isBinaryExpression(p) && [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken].includes(p.operatorToken.kind)) {
    const other = p.left === node ? p.right : p.left;
    return ts.isCallExpression(other) && /(^|\.)basename$/.test(other.expression.getText());
  }
  return false;
}

/**
 * Literals that stay, per file, each with its reason (the list only shrinks). `file → values`.
 */
export const LITERALS_THAT_STAY: Record<string, { values: string[]; reason: string }> = {
  'libs/storage/src/config/runs-root.ts': { values: ['runs'], reason: "the default runs root ~/.run-agent/runs (upstream's name), not a task's runs folder" },
  'libs/scaleout/src/change-record.ts': { values: ['PROJECT-MESSAGE-BUS.md'], reason: 'libs/scaleout is being split in parallel (#31): convert after that merge' },
  'libs/scaleout/src/task-writes.ts': { values: ['TASK.md'], reason: 'libs/scaleout is being split in parallel (#31): convert after that merge' },
  'libs/scaleout/src/worker.ts': { values: ['TASK.md', 'DONE'], reason: 'libs/scaleout is being split in parallel (#31): convert after that merge' },
};

/** Values defined by more than one constant (one obvious place per name). */
export function duplicateConstants(constants: Map<string, string[]>): string[] {
  return [...constants].filter(([, defs]) => defs.length > 1).map(([v, defs]) => `'${v}': ${defs.join(', ')}`);
}

// ---------------------------------------------------------------------------------------------
// 3. Size budget of command and controller files
// ---------------------------------------------------------------------------------------------

/** Command and controller files stay thin: parse flags, call a lib, print or answer. */
export const COMMAND_FILE_BUDGET = 150;
const COMMAND_FILE = /^apps\/[^/]+\/src\/.*\.(command|commands|controller)\.ts$/;

/** Files over the budget today, with their current size as a ceiling (the list only shrinks). */
export const OVER_BUDGET: Record<string, number> = {};

const lineCount = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

export function overBudget(sources: Sources, budget = COMMAND_FILE_BUDGET, listed = OVER_BUDGET): string[] {
  return [...sources]
    .filter(([file]) => COMMAND_FILE.test(file))
    .map(([file, text]) => [file, lineCount(text)] as const)
    .filter(([file, n]) => n > (listed[file] ?? budget))
    .map(([file, n]) => `${file}: ${n} lines > ${listed[file] ?? budget}`);
}

// ---------------------------------------------------------------------------------------------
// 4. execa is loaded where it is used, never at start-up
// ---------------------------------------------------------------------------------------------

/** Loads of `execa` at module level: a value import, or a `require('execa')` outside any function. */
export function eagerExeca(sources: Sources): string[] {
  const bad: string[] = [];
  for (const [file, text] of sources) {
    if (!text.includes('execa')) continue;
    walk(file, text, (node, sf) => {
      const line = () => `${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`;
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && node.moduleSpecifier.text === 'execa' && !node.importClause?.isTypeOnly) bad.push(line());
      if (ts.isImportEqualsDeclaration(node) && !node.isTypeOnly && ts.isExternalModuleReference(node.moduleReference) && /['"]execa['"]/.test(node.moduleReference.getText())) bad.push(line());
      if (ts.isCallExpression(node) && node.expression.getText() === 'require' && node.arguments[0] && ts.isStringLiteral(node.arguments[0]) && node.arguments[0].text === 'execa') {
        let p: ts.Node | undefined = node.parent;
        while (p && !ts.isFunctionLike(p)) p = p.parent;
        if (!p) bad.push(line());
      }
    });
  }
  return bad;
}

describe('seam rules', () => {
  const sources = readSources('apps', 'libs');

  it('no new BusWriter / new RunsLayout outside their owners (beyond the shrinking list)', () => {
    const { over, stale } = constructionProblems(constructionsOutsideOwners(sources));
    expect(over).toEqual([]);
    expect(stale).toEqual([]);
  });

  it('no file-name literal that has a constant, and each file name has one constant', () => {
    const constants = fileNameConstants(sources);
    expect(constants.get('TASK.md')).toEqual(['TASK_PROMPT_FILE@libs/storage/src/task-files.ts']);
    expect(duplicateConstants(constants)).toEqual([]);
    expect(fileNameLiterals(sources, constants)).toEqual([]);
    // every listed exemption is still needed
    const unneeded = Object.entries(LITERALS_THAT_STAY).flatMap(([f, { values }]) =>
      values.filter((v) => !fileNameLiterals(new Map([[f, sources.get(f) ?? '']]), constants, {}).some((hit) => hit.includes(`'${v}'`))).map((v) => `${f} ${v}`),
    );
    expect(unneeded).toEqual([]);
  });

  it(`command and controller files stay within ${COMMAND_FILE_BUDGET} lines (listed ones within their ceiling)`, () => {
    expect(overBudget(sources)).toEqual([]);
    const stale = Object.entries(OVER_BUDGET).filter(([f, n]) => !sources.has(f) || lineCount(sources.get(f)!) < n || n <= COMMAND_FILE_BUDGET);
    expect(stale.map(([f]) => f)).toEqual([]);
  });

  it('execa is required inside the functions that run a tool process, never at module level', () => {
    expect(eagerExeca(sources)).toEqual([]);
    expect([...sources.values()].some((t) => t.includes("require('execa')"))).toBe(true);
  });

  describe('each rule sees a violation', () => {
    it('a new BusWriter in an engine file, a new RunsLayout beyond the listed count; owners pass', () => {
      const planted: Sources = new Map([
        ['libs/runner/src/x.ts', "import { BusWriter } from '@app/messagebus';\nexport const w = new BusWriter('/tmp/b');\n"],
        ['libs/runner/src/task.ts', 'const a = new RunsLayout(r);\nconst b = new RunsLayout(r);\nconst c = new storage.RunsLayout(r);\n'],
        ['libs/messagebus/src/bus-writers.ts', "export const w = new BusWriter('/tmp/b');\n"],
        ['apps/api/src/server.ts', 'const l = new RunsLayout(r);\n'],
      ]);
      const found = constructionsOutsideOwners(planted);
      expect(constructionProblems(found, { 'libs/runner/src/task.ts': 2 }).over).toEqual(['libs/runner/src/x.ts: 1 > 0', 'libs/runner/src/task.ts: 3 > 2']);
      expect(constructionProblems(new Map(), { 'libs/runner/src/task.ts': 2 }).stale).toEqual(['libs/runner/src/task.ts: listed 2, uses 0']);
    });

    it('a hand-written file name, a duplicate constant; a bare word only in a path context', () => {
      const planted: Sources = new Map([
        ['libs/storage/src/task-files.ts', "export const TASK_PROMPT_FILE = 'TASK.md';\nexport const DONE_FILE = 'DONE';\n"],
        ['libs/runner/src/a.ts', "const p = join(dir, 'TASK.md');\nconst d = existsSync(join(dir, 'DONE'));\nconst header = ['TASK_ID', 'DONE'];\nstate.phase = 'DONE';\n"],
        ['apps/cli/src/b.ts', "export const DONE_MARKER_FILE = 'DONE';\nif (basename(x) !== 'DONE') y();\n"],
      ]);
      const constants = fileNameConstants(planted);
      expect(duplicateConstants(constants)).toEqual(["'DONE': DONE_FILE@libs/storage/src/task-files.ts, DONE_MARKER_FILE@apps/cli/src/b.ts"]);
      expect(fileNameLiterals(planted, constants)).toEqual([
        "libs/runner/src/a.ts:1 'TASK.md' (TASK_PROMPT_FILE)",
        "libs/runner/src/a.ts:2 'DONE' (DONE_FILE, DONE_MARKER_FILE)",
        "apps/cli/src/b.ts:2 'DONE' (DONE_FILE, DONE_MARKER_FILE)",
      ]);
    });

    it('execa imported or required at module level; inside a function it passes', () => {
      const planted: Sources = new Map([
        ['libs/runner/src/a.ts', "import { execa } from 'execa';\nimport type { Options } from 'execa';\n"],
        ['libs/runner/src/b.ts', "const execa = require('execa');\nexport async function f() {\n  const e = require('execa');\n}\nexport const g = () => require('execa');\n"],
        ['libs/runner/src/c.ts', "import execa = require('execa');\n"],
      ]);
      expect(eagerExeca(planted)).toEqual(['libs/runner/src/a.ts:1', 'libs/runner/src/b.ts:1', 'libs/runner/src/c.ts:1']);
    });

    it('a command file over the budget, and a listed one over its ceiling', () => {
      const lines = (n: number) => 'x\n'.repeat(n);
      const planted: Sources = new Map([
        ['apps/cli/src/commands/a/fat.command.ts', lines(151)],
        ['apps/api/src/b/b.controller.ts', lines(150)],
        ['apps/cli/src/commands/a/helper.ts', lines(900)],
        ['apps/api/src/projects/project-tasks.controller.ts', lines(268)],
      ]);
      const listed = { 'apps/api/src/projects/project-tasks.controller.ts': 267 };
      expect(overBudget(planted, COMMAND_FILE_BUDGET, listed)).toEqual(['apps/cli/src/commands/a/fat.command.ts: 151 lines > 150', 'apps/api/src/projects/project-tasks.controller.ts: 268 lines > 267']);
    });
  });
});
