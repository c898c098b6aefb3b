import { Body, Controller, Headers, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GithubInboundService, TriggerError } from '@app/triggers';
import { ApiError } from '../common/api-error';
import { rawBodyOf } from '../common/json-body';
import { toApiError } from './trigger-errors';

/**
 * POST /api/v1/forge/github: GitHub webhook deliveries (docs/triggers.md). Its own auth: the
 * `X-Hub-Signature-256` HMAC with the configured secret (request-hooks.ts OWN_AUTH_ROUTES). No
 * `forge.github` configured → 404; a bad signature → 401; acted on → 200; ignored or a
 * redelivery → 202.
 */
@Controller('api/v1/forge')
export class ForgeController {
  constructor(private readonly github: GithubInboundService) {}

  @Post('github')
  @HttpCode(200)
  async receive(
    @Body() payload: unknown,
    @Headers('x-github-event') event: string | undefined,
    @Headers('x-github-delivery') delivery: string | undefined,
    @Headers('x-hub-signature-256') signature: string | undefined,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    if (!this.github.enabled) throw new ApiError('NOT_FOUND', 'no GitHub forge is configured (forge.github)');
    try {
      const res = await this.github.receive({ event, delivery, signature, rawBody: rawBodyOf(req), payload });
      if (['ignored', 'duplicate', 'pong'].includes(res.outcome)) void reply.code(202);
      return res;
    } catch (err) {
      if (err instanceof TriggerError && err.code === 'UNAUTHORIZED') {
        void reply.code(401);
        return { error: 'unauthorized', message: err.message };
      }
      throw toApiError(err);
    }
  }
}
