import { Controller, Delete, Get, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { McpSessions } from './mcp-sessions.service';

/** MCP over Streamable HTTP (POST requests, GET notification stream, DELETE session end). */
@Controller('mcp')
export class McpController {
  constructor(private readonly sessions: McpSessions) {}

  @Post()
  post(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.sessions.handle(req, reply);
  }

  @Get()
  stream(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.sessions.handle(req, reply);
  }

  @Delete()
  end(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.sessions.handle(req, reply);
  }
}
