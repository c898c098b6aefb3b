import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { MessageBusService, readMessages } from '@app/messagebus';
import { isTaskDone, readTaskPrompt } from '@app/storage';
import { askQuestion, taskUiLink } from '@app/runner';
import type { ForgeTasks, TaskStartRequest, TaskStartResult } from '@app/triggers';
import { WebhookService } from '@app/webhook';
import { API_CONTEXT, ApiContext } from '../common/api-context';
import { NeedsInputService } from '../needs-input/needs-input.service';
import { applyTaskWrite } from '../tasks/scaleout-hooks';
import { TasksService } from '../tasks/tasks.service';
import { ApiTaskStarter } from './api-task-starter';

/** What an agent reports about its work (a pull request's summary quotes the newest of them). */
const PROGRESS_TYPES = new Set(['FACT', 'PROGRESS', 'DECISION']);

/** The GitHub adapter's task operations, through the API's own use cases (start, wake, cancel). */
@Injectable()
export class ApiForgeTasks implements ForgeTasks {
  constructor(
    @Inject(API_CONTEXT) private readonly ctx: ApiContext,
    private readonly starter: ApiTaskStarter,
    private readonly needsInputs: NeedsInputService,
    private readonly tasks: TasksService,
    private readonly webhooks: WebhookService,
    private readonly bus: MessageBusService,
  ) {}

  start(req: TaskStartRequest): Promise<TaskStartResult> {
    return this.starter.start(req);
  }

  async wake(projectId: string, taskId: string, type: string, body: string): Promise<void> {
    await this.needsInputs.wake(projectId, taskId, type, body);
  }

  /** The task is reopened (DONE removed, no loop started) with an open question; the needs_input webhook fires. */
  async needsInput(projectId: string, taskId: string, body: string): Promise<void> {
    await applyTaskWrite(this.ctx, { op: 'resume', projectId, taskId });
    const q = await askQuestion({ busPath: this.ctx.layout.taskBus(projectId, taskId), taskDir: this.ctx.layout.taskDir(projectId, taskId), projectId, taskId, body, type: 'BLOCKED', writers: this.bus.writers });
    if (!this.webhooks.wanted(undefined, 'needs_input')) return;
    void this.webhooks.deliver(undefined, {
      event: 'needs_input',
      project_id: projectId,
      task_id: taskId,
      run_id: '',
      question_id: q.msg_id,
      question_type: q.type,
      question: q.body,
      asked_at: q.ts.toISOString(),
      open_questions: 1,
      ui_url: taskUiLink(this.ctx.conductorUrl, projectId, taskId),
    });
  }

  async note(projectId: string, taskId: string, body: string): Promise<void> {
    await this.bus.systemWriters(this.ctx.layout.taskBus(projectId, taskId)).append({ type: 'INFO', project_id: projectId, task_id: taskId, run_id: '', body });
  }

  isDone(projectId: string, taskId: string): boolean {
    return isTaskDone(this.ctx.layout.taskDir(projectId, taskId));
  }

  title(projectId: string, taskId: string): string {
    const first = (readTaskPrompt(this.ctx.layout.taskDir(projectId, taskId)) ?? '').split('\n').find((l) => l.trim() !== '');
    const text = (first ?? '').replace(/^#+\s*/, '').trim();
    return text === '' ? `Task ${taskId}` : text.length > 100 ? `${text.slice(0, 99)}…` : text;
  }

  recentProgress(projectId: string, taskId: string, max: number): Array<{ type: string; body: string }> {
    return readMessages(this.ctx.layout.taskBus(projectId, taskId), { last: 200 })
      .filter((m) => PROGRESS_TYPES.has(m.type))
      .slice(-max)
      .map((m) => ({ type: m.type, body: m.body }));
  }

  async stop(projectId: string, taskId: string, reason: string): Promise<void> {
    await this.tasks.cancel(taskId, projectId, { method: 'POST', url: '/(github)', headers: { 'x-request-id': reason }, ip: '' } as unknown as FastifyRequest);
  }
}
