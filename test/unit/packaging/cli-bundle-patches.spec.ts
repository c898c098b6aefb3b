// The bundles' start-up patches of NestJS, nest-commander and Fastify (scripts/cli-bundle/patch-loader.js)
// still apply to the installed versions, and a patch that no longer matches fails the build.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

interface Patch {
  file: RegExp;
  from: RegExp;
}
interface LoaderContext {
  resourcePath: string;
  getOptions: () => { app: 'cli' | 'api' };
}
const loader = require('../../../scripts/cli-bundle/patch-loader.js') as ((this: LoaderContext, source: string) => string) & { patchesOf: (app: string) => Patch[] };
/** The loader as webpack runs it for `app`'s bundle on `file`. */
const patch = (file: string, source: string, app: 'cli' | 'api' = 'cli') => loader.call({ resourcePath: file, getOptions: () => ({ app }) }, source);

/** Runs `source` as the module `file` (its own requires resolve from its folder), as a bundle would. */
function runAs<T>(file: string, source: string): T {
  const mod = new Module(file);
  mod.filename = file;
  mod.paths = (Module as unknown as { _nodeModulePaths: (dir: string) => string[] })._nodeModulePaths(dirname(file));
  (mod as unknown as { _compile: (code: string, file: string) => void })._compile(source, file);
  return mod.exports as T;
}

const installed = [
  require.resolve('@nestjs/common/services/logger.service.js'),
  require.resolve('@nestjs/common/services/console-logger.service.js'),
  join(dirname(require.resolve('nest-commander')), 'command-runner.module.js'),
];
const scanner = require.resolve('@nestjs/core/scanner.js');
const injector = require.resolve('@nestjs/core/injector/injector.js');
const schemaController = require.resolve('fastify/lib/schema-controller.js');
const fastifyStatic = require.resolve('@fastify/static');

describe('bundle patches', () => {
  it.each(installed)('patches %s to build nothing at load time', (file) => {
    const source = readFileSync(file, 'utf8');
    const out = patch(file, source);
    expect(out).not.toBe(source);
    expect(out).not.toMatch(/const dateTimeFormatter = new Intl/);
    expect(out).not.toMatch(/input: process\.stdin/);
    if (/Intl/.test(source)) expect(out).toContain('dateTimeFormatterReal ??= new Intl.DateTimeFormat(');
    else expect(out).toContain('get input() { return process.stdin; }');
  });

  it("skips the scanner's search for enhancers (the CLI has no controllers to apply them to)", () => {
    const source = readFileSync(scanner, 'utf8');
    const out = patch(scanner, source);
    const method = /reflectDynamicMetadata\(cls, token, hostToken = cls\) \{[\s\S]*?this\.reflectInjectables\(cls/.exec(out)?.[0] ?? '';
    expect(method).toMatch(/\{\s*if \(true\) \{[^\n]*\n\s*return;/);
    // the rest of the scanner is unchanged
    expect(out.replace(/if \(true\) \{[^\n]*/, '')).toBe(source.replace(/if \(!cls \|\| !cls\.prototype\) \{/, ''));
  });

  it("keeps the scanner's search for enhancers in the API bundle: a controller's guards, pipes and interceptors apply", () => {
    const source = readFileSync(scanner, 'utf8');
    expect(patch(scanner, source, 'api')).toBe(source);
  });

  it("times the injector's instantiations with process.hrtime in the CLI bundle (perf_hooks stays a lazy stand-in there)", async () => {
    const source = readFileSync(injector, 'utf8');
    const out = patch(injector, source);
    expect(out).not.toMatch(/performance\.now\(\)/);
    const { Injector } = runAs<{ Injector: new () => { getNowTimestamp: () => number } }>(injector, out);
    const clock = new Injector();
    const t0 = clock.getNowTimestamp();
    await new Promise((resolve) => setTimeout(resolve, 20));
    // milliseconds, as performance.now() measured them
    expect(clock.getNowTimestamp() - t0).toBeGreaterThanOrEqual(19);
    expect(clock.getNowTimestamp() - t0).toBeLessThan(10_000);
    expect(patch(injector, source, 'api')).toBe(source);
  });

  it("builds Fastify's schema compilers on first use, and they still validate and serialize", () => {
    const source = readFileSync(schemaController, 'utf8');
    const out = patch(schemaController, source, 'api');
    expect(out).not.toMatch(/= ValidatorSelector\(\)|= SerializerSelector\(\)/);
    const { buildSchemaController } = runAs<{ buildSchemaController: () => { opts: { compilersFactory: Record<string, (...a: unknown[]) => unknown> } } }>(schemaController, out);
    const { buildValidator, buildSerializer } = buildSchemaController().opts.compilersFactory;
    const compileValidator = buildValidator({}, { customOptions: {} }) as (route: unknown) => (data: unknown) => boolean;
    const validate = compileValidator({ schema: { type: 'object', required: ['a'] }, method: 'POST', url: '/x', httpPart: 'body' });
    expect([validate({ a: 1 }), validate({})]).toEqual([true, false]);
    const compileSerializer = buildSerializer({}, {}) as (route: unknown) => (data: unknown) => string;
    expect(compileSerializer({ schema: { type: 'object', properties: { a: { type: 'number' } } }, method: 'GET', url: '/x', httpStatus: '200' })({ a: 1, b: 2 })).toBe('{"a":1}');
  });

  it('@fastify/static loads glob only to list the files, which it still does without wildcards', async () => {
    const out = patch(fastifyStatic, readFileSync(fastifyStatic, 'utf8'), 'api');
    expect(out).not.toMatch(/require\('glob'\)\s*$/m);
    const dir = mkdtempSync(join(tmpdir(), 'static-patch-'));
    try {
      mkdirSync(join(dir, 'sub'));
      writeFileSync(join(dir, 'sub', 'a.txt'), 'listed');
      const fastify = (require('fastify') as (opts?: object) => { register: (p: unknown, o: object) => void; inject: (o: object) => Promise<{ statusCode: number; body: string }>; printRoutes: () => string; close: () => Promise<void> })();
      fastify.register(runAs(fastifyStatic, out), { root: dir, wildcard: false });
      // without wildcards each file found by glob gets its own route
      expect((await fastify.inject({ method: 'GET', url: '/sub/a.txt' })).body).toBe('listed');
      expect(fastify.printRoutes()).toContain('sub/a.txt');
      await fastify.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('every patch has an installed file to apply to', () => {
    for (const p of loader.patchesOf('cli').concat(loader.patchesOf('api'))) expect([...installed, scanner, injector, schemaController, fastifyStatic].some((f) => p.file.test(f))).toBe(true);
  });

  it('leaves other files alone and fails loudly when a patched file changed shape', () => {
    expect(patch('/x/node_modules/other/index.js', 'const a = 1;')).toBe('const a = 1;');
    expect(() => patch(installed[0], 'module.exports = {};')).toThrow(/cli bundle: .*logger\.service\.js no longer matches .*update scripts\/cli-bundle\/patch-loader\.js/);
    expect(() => patch(schemaController, 'module.exports = {};', 'api')).toThrow(/api bundle: .*schema-controller\.js no longer matches/);
  });
});
