import { Inject, Injectable } from '@nestjs/common';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BusMessage, MessageBusService, readMessages, validateHeaderFields } from '@app/messagebus';
import { API_CONTEXT, ApiContext } from '../common/api-context';
import { ApiError, badRequest } from '../common/api-error';
import { formatTime } from '../common/go-format';
import { confine } from '../security/path-confinement';
import { toRestMessage } from '../projects/shapes';
import { applyTaskWrite, postProjectMessage } from '../tasks/scaleout-hooks';

export const MESSAGE_LIMIT_MAX = 5000;

/** Bus reads and writes for the message routes (api.md §1.2 #18/#19, §1.3 #29/#30/#37/#38). */
@Injectable()
export class MessagesService {
  constructor(
    @Inject(API_CONTEXT) private readonly ctx: ApiContext,
    private readonly bus: MessageBusService,
  ) {}

  busPath(projectId: string, taskId?: string): string {
    const p = taskId ? this.ctx.layout.taskBus(projectId, taskId) : this.ctx.layout.projectBus(projectId);
    return confine(this.ctx.root, p, 'message bus path');
  }

  /** Messages after `since` (404 `message id not found` when absent), newest `limit` kept; missing bus → []. */
  list(busPath: string, since?: string, limit?: number) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(busPath);
    } catch {
      if (since) throw new ApiError('NOT_FOUND', 'message id not found');
      return { messages: [] };
    }
    if (st.isSymbolicLink() || !st.isFile()) throw new ApiError('INTERNAL', 'read message bus');
    let messages: BusMessage[];
    if (since) messages = readMessages(busPath, { sinceId: since });
    else if (limit && limit > 0) messages = readMessages(busPath, { last: limit });
    else messages = readMessages(busPath);
    if (limit && limit > 0 && messages.length > limit) messages = messages.slice(-limit);
    return { messages: messages.map(toRestMessage) };
  }

  async post(input: { projectId: string; taskId?: string; runId?: string; type?: string; body: string }) {
    if (input.body.trim() === '') throw badRequest('body is required');
    const header = { type: input.type?.trim() || 'USER', project_id: input.projectId, task_id: input.taskId ?? '', run_id: input.runId ?? '' };
    validateHeaderFields(header);
    const bus = this.busPath(input.projectId, input.taskId);
    const maxBodyBytes = this.ctx.config?.storage?.max_message_body_bytes || undefined;
    if (input.taskId) {
      // a task's bus: written by the task's owner (here, or its worker with --nats)
      const { message } = await applyTaskWrite(this.ctx, { op: 'post', projectId: input.projectId, taskId: input.taskId, type: header.type, runId: header.run_id, body: input.body, maxBodyBytes });
      return { msg_id: message!.msg_id, timestamp: formatTime(new Date(message!.ts)) };
    }
    // with --nats the replica is written by replication only: the post goes through NATS
    if (this.ctx.scaleout) {
      const posted = await postProjectMessage(this.ctx.scaleout, { ...header, body: input.body }, maxBodyBytes);
      return { msg_id: posted.msg_id, timestamp: formatTime(posted.ts) };
    }
    fs.mkdirSync(path.dirname(bus), { recursive: true });
    // Counted in conductor_messagebus_appends_total by MetricsService's append observer.
    const msg = await this.bus.writer(bus).append({ ...header, body: input.body });
    return { msg_id: msg.msg_id, timestamp: formatTime(msg.ts) };
  }
}

/** `limit` query: positive int capped at 5000; invalid or ≤ 0 = unlimited. */
export function parseMessageLimit(text: string | undefined): number | undefined {
  const n = Number.parseInt(text ?? '', 10);
  if (!Number.isFinite(n) || n <= 0) return undefined;
  return Math.min(n, MESSAGE_LIMIT_MAX);
}
