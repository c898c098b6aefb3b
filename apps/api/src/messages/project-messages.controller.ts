import { Body, Controller, Get, Headers, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendSse } from '../sse/send-sse';
import { checkId } from '../common/ids';
import { AuditLogService } from '../security/audit-log.service';
import { BusHub } from '@app/streams';
import { NeedsInputService } from '../needs-input/needs-input.service';
import { PostMessageDto, PostTaskMessageDto } from './dto/post-message.dto';
import { MessagesService, projectPageRequest } from './messages.service';

/** Project and task message buses: #29–#31 and #37–#39. */
@Controller('api/projects/:p')
export class ProjectMessagesController {
  constructor(
    private readonly messages: MessagesService,
    private readonly hub: BusHub,
    private readonly audit: AuditLogService,
    private readonly needsInput: NeedsInputService,
  ) {}

  @Get('messages')
  listProject(@Param('p') p: string, @Query('since') since?: string, @Query('limit') limit?: string, @Query('before') before?: string) {
    const projectId = checkId(p, 'project_id');
    return this.messages.list(this.messages.busPath(projectId), projectPageRequest(since, before, limit));
  }

  @Post('messages')
  async postProject(@Param('p') p: string, @Body() body: PostMessageDto, @Req() req: FastifyRequest) {
    const projectId = checkId(p, 'project_id');
    const res = await this.messages.post({ projectId, type: body.type, body: body.body });
    this.audit.record(req, { endpoint: 'POST /api/projects/{project_id}/messages', project_id: projectId, message_id: res.msg_id, payload: { type: body.type, body: body.body } });
    return res;
  }

  @Get('messages/stream')
  streamProject(@Param('p') p: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply, @Headers('last-event-id') lastEventId?: string): void {
    const projectId = checkId(p, 'project_id');
    sendSse(req, reply, (signal) => this.hub.stream(this.messages.busPath(projectId), lastEventId, signal));
  }

  @Get('tasks/:t/messages')
  listTask(@Param('p') p: string, @Param('t') t: string, @Query('since') since?: string, @Query('limit') limit?: string, @Query('before') before?: string) {
    const projectId = checkId(p, 'project_id');
    const taskId = checkId(t, 'task_id');
    return this.messages.list(this.messages.busPath(projectId, taskId), projectPageRequest(since, before, limit));
  }

  @Post('tasks/:t/messages')
  async postTask(@Param('p') p: string, @Param('t') t: string, @Body() body: PostTaskMessageDto, @Req() req: FastifyRequest) {
    const projectId = checkId(p, 'project_id');
    const taskId = checkId(t, 'task_id');
    const res = body.resume ? await this.needsInput.wake(projectId, taskId, body.type, body.body) : await this.messages.post({ projectId, taskId, type: body.type, body: body.body });
    this.audit.record(req, { endpoint: 'POST /api/projects/{project_id}/tasks/{task_id}/messages', project_id: projectId, task_id: taskId, message_id: res.msg_id, payload: { type: body.type, body: body.body, resume: body.resume } });
    return res;
  }

  @Get('tasks/:t/messages/stream')
  streamTask(@Param('p') p: string, @Param('t') t: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply, @Headers('last-event-id') lastEventId?: string): void {
    const projectId = checkId(p, 'project_id');
    const taskId = checkId(t, 'task_id');
    sendSse(req, reply, (signal) => this.hub.stream(this.messages.busPath(projectId, taskId), lastEventId, signal));
  }
}
