import { Body, Controller, Get, Param, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { checkId, checkOptionalId, isId } from '../common/ids';
import { pageQuery } from '../projects/pagination';
import { AuditLogService } from '../security/audit-log.service';
import { AnswerDto } from './answer.dto';
import { NeedsInputService } from './needs-input.service';

/** The key of an open question in the list: `<project>/<task>/<msg_id>`. */
function isQuestionKey(c: string): boolean {
  const parts = c.split('/');
  return parts.length === 3 && parts.every(isId);
}

/** Needs-input routes (#17): answer a task's question; list open questions across projects. */
@Controller('api')
export class NeedsInputController {
  constructor(
    private readonly needsInput: NeedsInputService,
    private readonly audit: AuditLogService,
  ) {}

  @Get('v1/questions')
  list(@Query('project_id') projectId?: string, @Query('limit') limit?: string, @Query('after') after?: string) {
    const q = pageQuery(limit, after, isQuestionKey);
    return this.needsInput.openQuestions(checkOptionalId(projectId, 'project_id'), q);
  }

  @Post('projects/:p/tasks/:t/answer')
  async answer(@Param('p') p: string, @Param('t') t: string, @Body() body: AnswerDto, @Req() req: FastifyRequest) {
    const projectId = checkId(p, 'project_id');
    const taskId = checkId(t, 'task_id');
    const questionId = checkOptionalId(body.question_id, 'question_id');
    const res = await this.needsInput.answer(projectId, taskId, body.body, questionId);
    this.audit.record(req, { endpoint: 'POST /api/projects/{project_id}/tasks/{task_id}/answer', project_id: projectId, task_id: taskId, message_id: res.msg_id, payload: { question_id: questionId, body: body.body } });
    return res;
  }
}
