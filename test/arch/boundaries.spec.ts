import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(__dirname, '..', '..');

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return tsFiles(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

const forbiddenModules = [
  /^@nestjs\/platform-/,
  /^fastify$/,
  /^@fastify\//,
  /^@willsoto\//,
  /^prom-client$/,
  /^nest-commander/,
  /(^|\/)apps\//,
];
const forbiddenIdentifiers = /\b\w*HttpException\b|\bNotFoundException\b|\bBadRequestException\b|\bForbiddenException\b|\bConflictException\b/;
const importSpecifier = /(?:from\s+|require\(\s*|import\(\s*)['"]([^'"]+)['"]/g;

describe('library boundaries', () => {
  const libFiles = tsFiles(join(root, 'libs'));

  it('finds the library sources', () => {
    expect(libFiles.length).toBeGreaterThan(0);
  });

  it.each(libFiles.map((f) => [relative(root, f), f]))('%s imports no server or CLI package', (_name, file) => {
    const text = readFileSync(file, 'utf8');
    const specifiers = [...text.matchAll(importSpecifier)].map((m) => m[1]);
    const bad = specifiers.filter((s) => forbiddenModules.some((re) => re.test(s)));
    expect(bad).toEqual([]);
    expect(text).not.toMatch(forbiddenIdentifiers);
  });

  it('each library exports exactly one Nest module from its index', () => {
    for (const lib of ['storage', 'messagebus', 'runner', 'agents']) {
      const index = readFileSync(join(root, 'libs', lib, 'src', 'index.ts'), 'utf8');
      expect(index).toMatch(new RegExp(`export \\* from '\\./${lib}\\.module'`));
    }
  });
});
