// What remains of the bundles' start-up trimming of third-party packages: the one source patch of
// NestJS (scripts/cli-bundle/patch-loader.js) still applies to the installed version and fails the
// build when it no longer matches; Fastify's schema compilers come lazily through its own option
// (apps/api/src/boot/schema-compilers.ts), and glob through the API bundle's stand-in
// (scripts/api-bundle/glob.js). docs/decisions.md, "Start-up and memory", has the figures.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lazySchemaCompilers } from '../../../apps/api/src/boot/schema-compilers';

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

const loggers = [require.resolve('@nestjs/common/services/logger.service.js'), require.resolve('@nestjs/common/services/console-logger.service.js')];
const loaded = (pkg: string) => Object.keys(require.cache).some((f) => f.includes(`${join('node_modules', pkg)}/`));

describe('bundle patches', () => {
  it.each(loggers)('patches %s to build its DateTimeFormat on first use, in both bundles', (file) => {
    const source = readFileSync(file, 'utf8');
    for (const app of ['cli', 'api'] as const) {
      const out = patch(file, source, app);
      expect(out).not.toMatch(/const dateTimeFormatter = new Intl/);
      expect(out).toContain('dateTimeFormatterReal ??= new Intl.DateTimeFormat(');
    }
  });

  it('is the only patch, and it has installed files to apply to', () => {
    expect(loader.patchesOf('cli')).toHaveLength(1);
    expect(loader.patchesOf('api')).toEqual(loader.patchesOf('cli'));
    for (const p of loader.patchesOf('cli')) expect(loggers.every((f) => p.file.test(f))).toBe(true);
  });

  it('leaves other files alone and fails loudly when the patched file changed shape', () => {
    expect(patch('/x/node_modules/other/index.js', 'const a = 1;')).toBe('const a = 1;');
    expect(() => patch(loggers[0], 'module.exports = {};')).toThrow(/cli bundle: .*logger\.service\.js no longer matches .*update scripts\/cli-bundle\/patch-loader\.js/);
    expect(() => patch(loggers[1], 'module.exports = {};', 'api')).toThrow(/api bundle: .*console-logger\.service\.js no longer matches/);
  });
});

describe("Fastify's schema compilers on first use (schemaController.compilersFactory)", () => {
  it('loads Ajv and fast-json-stringify only when a schema is compiled, and they still validate and serialize', () => {
    expect([loaded('@fastify/ajv-compiler'), loaded('@fastify/fast-json-stringify-compiler')]).toEqual([false, false]);
    const { buildValidator, buildSerializer } = lazySchemaCompilers();
    expect([loaded('@fastify/ajv-compiler'), loaded('@fastify/fast-json-stringify-compiler')]).toEqual([false, false]);
    const validate = buildValidator({}, { customOptions: {} })({ schema: { type: 'object', required: ['a'] }, method: 'POST', url: '/x', httpPart: 'body' }) as (data: unknown) => boolean;
    expect([validate({ a: 1 }), validate({})]).toEqual([true, false]);
    const serialize = buildSerializer({}, {})({ schema: { type: 'object', properties: { a: { type: 'number' } } }, method: 'GET', url: '/x', httpStatus: '200' });
    expect(serialize({ a: 1, b: 2 })).toBe('{"a":1}');
    expect([loaded('@fastify/ajv-compiler'), loaded('@fastify/fast-json-stringify-compiler')]).toEqual([true, true]);
  });

  it('validates a route schema in a Fastify instance built with them', async () => {
    const fastify = (require('fastify') as (opts?: object) => { post: (url: string, o: object, h: () => object) => void; inject: (o: object) => Promise<{ statusCode: number }>; close: () => Promise<void> })({
      schemaController: { compilersFactory: lazySchemaCompilers() },
    });
    fastify.post('/x', { schema: { body: { type: 'object', required: ['a'] } } }, () => ({ ok: true }));
    expect((await fastify.inject({ method: 'POST', url: '/x', payload: { a: 1 } })).statusCode).toBe(200);
    expect((await fastify.inject({ method: 'POST', url: '/x', payload: {} })).statusCode).toBe(400);
    await fastify.close();
  });
});

describe("the API bundle's glob stand-in (scripts/api-bundle/glob.js)", () => {
  it('loads glob on its first call only and lists files as glob does (what @fastify/static asks of it)', async () => {
    const standIn = require('../../../scripts/api-bundle/glob.js') as { glob: (pattern: string, opts: object) => Promise<string[]> };
    expect(loaded('glob')).toBe(false);
    const dir = mkdtempSync(join(tmpdir(), 'glob-stand-in-'));
    try {
      mkdirSync(join(dir, 'sub'));
      writeFileSync(join(dir, 'sub', 'a.txt'), 'listed');
      expect(await standIn.glob('**/**', { cwd: dir, nodir: true })).toEqual([join('sub', 'a.txt')]);
      expect(loaded('glob')).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
