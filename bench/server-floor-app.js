'use strict';
// The floor app (#15): NestJS + Fastify with one controller, nothing of ours. Exports a promise of
// the port once listening. Loaded after the start-up trimming by server-floor.js (unbundled) and
// bundled by server-start.bench.js (bundledFloor) with the API bundle's webpack settings. Fastify
// gets the server's lazy schema compilers (apps/api/src/boot/schema-compilers.ts, from the build).
require('reflect-metadata');
const { Controller, Get, Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { FastifyAdapter } = require('@nestjs/platform-fastify');
const { lazySchemaCompilers } = require('../dist/apps/api/apps/api/src/boot/schema-compilers.js');

class HealthController {
  health() {
    return { status: 'ok' };
  }
}
Get('api/v1/health')(HealthController.prototype, 'health', Object.getOwnPropertyDescriptor(HealthController.prototype, 'health'));
Controller()(HealthController);
class FloorModule {}
Module({ controllers: [HealthController] })(FloorModule);

module.exports = NestFactory.create(FloorModule, new FastifyAdapter({ schemaController: { compilersFactory: lazySchemaCompilers() } }), { logger: false }).then(async (app) => {
  await app.listen(0, '127.0.0.1');
  return app.getHttpServer().address().port;
});
