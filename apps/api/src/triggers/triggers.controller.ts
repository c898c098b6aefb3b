import { Body, Controller, Get, Headers, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SchedulerService, TriggerError, TriggerService } from '@app/triggers';
import { toApiError } from './trigger-errors';
import { checkId } from '../common/ids';

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;

/** Schedules (docs/triggers.md): list with next fire time and history; fire one now. */
@Controller('api/v1/schedules')
export class SchedulesController {
  constructor(private readonly scheduler: SchedulerService) {}

  @Get()
  list() {
    return { schedules: this.scheduler.list() };
  }

  @Post(':name/fire')
  @HttpCode(201)
  async fire(@Param('name') name: string) {
    try {
      return { schedule: checkId(name, 'name'), run: await this.scheduler.fireNow(checkId(name, 'name')) };
    } catch (err) {
      throw toApiError(err);
    }
  }
}

/**
 * POST /api/v1/triggers/:name: its own auth (the trigger's bearer token), so the server API key is
 * not asked for on this route (request-hooks.ts TRIGGER_ROUTES); a wrong or missing token is 401.
 */
@Controller('api/v1/triggers')
export class TriggersController {
  constructor(private readonly triggers: TriggerService) {}

  @Post(':name')
  @HttpCode(201)
  async invoke(
    @Param('name') name: string,
    @Body() payload: unknown,
    @Headers('authorization') authorization: string | undefined,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const token = typeof authorization === 'string' ? BEARER.exec(authorization)?.[1] : undefined;
    try {
      const res = await this.triggers.invoke({ name, token, payload, idempotencyKey, httpRequest: req });
      if (res.replayed) void reply.code(200);
      return res;
    } catch (err) {
      if (err instanceof TriggerError && err.code === 'UNAUTHORIZED') {
        void reply.code(401).header('WWW-Authenticate', 'Bearer realm="conductor-trigger"');
        return { error: 'unauthorized', message: err.message };
      }
      if (err instanceof TriggerError && err.retryAfterSeconds) void reply.header('Retry-After', String(err.retryAfterSeconds));
      throw toApiError(err);
    }
  }
}
