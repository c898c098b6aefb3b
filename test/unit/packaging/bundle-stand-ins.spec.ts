// The bundles patch no third-party source (the last patch, NestJS's logger DateTimeFormat, went with
// the hot commands' move off NestJS: docs/decisions/startup-and-memory.md). Fastify's schema
// compilers come lazily through its own option (apps/api/src/boot/schema-compilers.ts), and glob
// through the API bundle's stand-in (scripts/api-bundle/glob.js).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lazySchemaCompilers } from '../../../apps/api/src/boot/schema-compilers';

const loaded = (pkg: string) => Object.keys(require.cache).some((f) => f.includes(`${join('node_modules', pkg)}/`));

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
