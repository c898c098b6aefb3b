import { Body, Controller, Get, Headers, MessageEvent, Post, Query, Req, Sse, SseSignal } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';
import { badRequest } from '../common/api-error';
import { checkId, checkOptionalId } from '../common/ids';
import { AuditLogService } from '../security/audit-log.service';
import { BusHub } from '../sse/bus-hub';
import { PostV1MessageDto } from './dto/post-message.dto';
import { MessagesService } from './messages.service';
import { SSE_OPTIONS } from '../sse/slow-clients';

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
  list(@Query('project_id') projectId?: string, @Query('task_id') taskId?: string, @Query('after') after?: string) {
    return this.messages.list(this.bus(projectId, taskId), after?.trim() || undefined);
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

  @Sse('stream', SSE_OPTIONS)
  stream(@SseSignal() signal: AbortSignal, @Query('project_id') projectId?: string, @Query('task_id') taskId?: string, @Headers('last-event-id') lastEventId?: string): Observable<MessageEvent> {
    return this.hub.stream(this.bus(projectId, taskId), lastEventId, signal);
  }
}
