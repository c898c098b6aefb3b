// Fastify builds its schema compilers (Ajv with its formats, fast-json-stringify: ~65 ms of CPU on
// Node 22/24) when an instance is created, and only a route with a schema uses them; the server has
// none at start. Fastify's own `schemaController.compilersFactory` option takes factories, so these
// build the default ones on first use (docs/decisions.md, "Start-up and memory"). Given factories
// mark the compilers custom, which changes one thing: a headers schema is compiled as written
// instead of with lower-cased keys; the server declares no headers schema.

import type { ValidatorFactory } from '@fastify/ajv-compiler';
import type { SerializerFactory } from '@fastify/fast-json-stringify-compiler';

/** `load()`'s factory, loaded on its first call. */
function lazyFactory<F extends (...args: never[]) => unknown>(load: () => F): F {
  let real: F | undefined;
  return ((...args: Parameters<F>) => (real ??= load())(...args)) as F;
}

export function lazySchemaCompilers(): { buildValidator: ValidatorFactory; buildSerializer: SerializerFactory } {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded on first use, the point of this file */
  return {
    buildValidator: lazyFactory(() => (require('@fastify/ajv-compiler') as () => ValidatorFactory)()),
    buildSerializer: lazyFactory(() => (require('@fastify/fast-json-stringify-compiler') as () => SerializerFactory)()),
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}
