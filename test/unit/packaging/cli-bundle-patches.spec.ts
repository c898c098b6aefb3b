// The CLI bundle's start-up patches of NestJS and nest-commander (scripts/cli-bundle/patch-loader.js)
// still apply to the installed versions, and a patch that no longer matches fails the build.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

interface Patch {
  file: RegExp;
  from: RegExp;
}
interface LoaderContext {
  resourcePath: string;
}
const loader = require('../../../scripts/cli-bundle/patch-loader.js') as ((this: LoaderContext, source: string) => string) & { PATCHES: Patch[] };

const installed = [
  require.resolve('@nestjs/common/services/logger.service.js'),
  require.resolve('@nestjs/common/services/console-logger.service.js'),
  join(dirname(require.resolve('nest-commander')), 'command-runner.module.js'),
];
const scanner = require.resolve('@nestjs/core/scanner.js');

describe('CLI bundle patches', () => {
  it.each(installed)('patches %s to build nothing at load time', (file) => {
    const source = readFileSync(file, 'utf8');
    const out = loader.call({ resourcePath: file }, source);
    expect(out).not.toBe(source);
    expect(out).not.toMatch(/const dateTimeFormatter = new Intl/);
    expect(out).not.toMatch(/input: process\.stdin/);
    if (/Intl/.test(source)) expect(out).toContain('dateTimeFormatterReal ??= new Intl.DateTimeFormat(');
    else expect(out).toContain('get input() { return process.stdin; }');
  });

  it("skips the scanner's search for enhancers (the CLI has no controllers to apply them to)", () => {
    const source = readFileSync(scanner, 'utf8');
    const out = loader.call({ resourcePath: scanner }, source);
    const method = /reflectDynamicMetadata\(cls, token, hostToken = cls\) \{[\s\S]*?this\.reflectInjectables\(cls/.exec(out)?.[0] ?? '';
    expect(method).toMatch(/\{\s*if \(true\) \{[^\n]*\n\s*return;/);
    // the rest of the scanner is unchanged
    expect(out.replace(/if \(true\) \{[^\n]*/, '')).toBe(source.replace(/if \(!cls \|\| !cls\.prototype\) \{/, ''));
  });

  it('every patch has an installed file to apply to', () => {
    for (const p of loader.PATCHES) expect([...installed, scanner].some((f) => p.file.test(f))).toBe(true);
  });

  it('leaves other files alone and fails loudly when a patched file changed shape', () => {
    expect(loader.call({ resourcePath: '/x/node_modules/other/index.js' }, 'const a = 1;')).toBe('const a = 1;');
    expect(() => loader.call({ resourcePath: installed[0] }, 'module.exports = {};')).toThrow(/logger\.service\.js no longer matches .*update scripts\/cli-bundle\/patch-loader\.js/);
  });
});
