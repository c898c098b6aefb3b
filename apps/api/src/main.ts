import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { ApiModule } from './api.module';

export async function startServer(port = 14355, host = '0.0.0.0'): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(ApiModule, new FastifyAdapter(), { logger: ['error', 'warn'] });
  app.enableShutdownHooks();
  await app.listen(port, host);
  return app;
}

if (require.main === module) {
  void startServer();
}
