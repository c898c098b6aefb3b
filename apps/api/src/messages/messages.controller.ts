import { Body, Controller, Get, Headers, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { badRequest } from '../common/api-error';
import { checkId, checkOptionalId } from '../common/ids';
import { AuditLogService } from '../security/audit-log.service';
import { BusHub } from '@app/streams';
import { PostV1MessageDto } from './dto/post-message.dto';
import { MessagesService, parseMessageLimit } from './messages.service';
import { sendSse } from '../sse/send-sse';

/** #18–#20 */
@Controller('api/v1/messages')
export class MessagesController {
  constructor(
    private readonly messages: MessagesService,
    private readonly hub: BusHub,
    private readonly audit: AuditLogService,
  ) {}

  private bus(projectId: string | undefined, taskId: string | undefined): string {
    if (!projectId?.trim()) throw badRequest('project_id is required');
    return this.messages.busPath(checkId(projectId, 'project_id'), checkOptionalId(taskId, 'task_id'));
  }

  @Get()
  list(@Query('project_id') projectId?: string, @Query('task_id') taskId?: string, @Query('after') after?: string, @Query('limit') limit?: string) {
    // oldest first from `after` (or the start), one page: follow next_cursor as `after`
    return this.messages.list(this.bus(projectId, taskId), { kind: 'oldest', after: after?.trim() || undefined, limit: parseMessageLimit(limit) });
  }

  @Post()
  async post(@Body() body: PostV1MessageDto, @Req() req: FastifyRequest) {
    const projectId = checkId(body.project_id, 'project_id');
    const taskId = checkOptionalId(body.task_id, 'task_id');
    const runId = checkOptionalId(body.run_id, 'run_id');
    const res = await this.messages.post({ projectId, taskId, runId, type: body.type, body: body.body });
    this.audit.record(req, { endpoint: 'POST /api/v1/messages', project_id: projectId, task_id: taskId, run_id: runId, message_id: res.msg_id, payload: body });
    return res;
  }

  @Get('stream')
  stream(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Query('project_id') projectId?: string, @Query('task_id') taskId?: string, @Headers('last-event-id') lastEventId?: string): void {
    const bus = this.bus(projectId, taskId);
    sendSse(req, reply, (signal) => this.hub.stream(bus, lastEventId, signal));
  }
}
