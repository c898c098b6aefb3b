'use strict';
// The floor under the server's start-up figures (#15): NestJS + Fastify with one controller and
// the same start-up trimming (rxjs bundle), nothing of ours. Prints the port once listening.
// Run by server-start.bench.js from the built tree: node bench/server-floor.js <dist lean-server.js>
require(process.argv[2]);
require('reflect-metadata');
const { Controller, Get, Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { FastifyAdapter } = require('@nestjs/platform-fastify');

class HealthController {
  health() {
    return { status: 'ok' };
  }
}
Get('api/v1/health')(HealthController.prototype, 'health', Object.getOwnPropertyDescriptor(HealthController.prototype, 'health'));
Controller()(HealthController);
class FloorModule {}
Module({ controllers: [HealthController] })(FloorModule);

NestFactory.create(FloorModule, new FastifyAdapter(), { logger: false })
  .then(async (app) => {
    await app.listen(0, '127.0.0.1');
    process.stdout.write(`${app.getHttpServer().address().port}\n`);
  });
